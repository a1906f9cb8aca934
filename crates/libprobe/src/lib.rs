//! The parameter registries of libfabric and UCX, read in-process from the library file
//! a job loads, for the copies that ship without `fi_info` or `ucx_info` (the ones MPI
//! wheels and vendor packages bundle).
//!
//! Each function opens the library with `dlopen`, asks it through its own API and prints
//! the registry in the form of the library's tool (`fi_info -e`, `ucx_info -c -f`), so
//! that one parser reads both (`netsel::registry`). Loading a library runs its code:
//! callers run these in a child process of their own (`netsel::stack`), so that a
//! library that crashes or hangs costs a missing registry, not the caller.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::path::Path;

/// Why a registry could not be read.
#[derive(Debug)]
pub struct ProbeError(pub String);

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProbeError {}

fn open(path: &Path) -> Result<libloading::Library, ProbeError> {
    // SAFETY: loading a shared library runs its constructors; the file is the one the
    // MPI library of the job links (found by `ldd`), and the caller runs this in a
    // process of its own, as the module says.
    unsafe { libloading::Library::new(path) }
        .map_err(|e| ProbeError(format!("cannot load {}: {e}", path.display())))
}

/// `struct fi_param` of `rdma/fabric.h` (libfabric 1.0 and later).
#[repr(C)]
struct FiParam {
    name: *const c_char,
    kind: c_int,
    help: *const c_char,
    value: *const c_char,
}

/// `struct fi_info` of `rdma/fabric.h`, as far as its fabric attributes (unchanged from
/// libfabric 1.0 to 2.x).
#[repr(C)]
struct FiInfo {
    next: *mut FiInfo,
    caps: u64,
    mode: u64,
    addr_format: u32,
    src_addrlen: usize,
    dest_addrlen: usize,
    src_addr: *mut c_void,
    dest_addr: *mut c_void,
    handle: *mut c_void,
    tx_attr: *mut c_void,
    rx_attr: *mut c_void,
    ep_attr: *mut c_void,
    domain_attr: *mut c_void,
    fabric_attr: *mut FiFabricAttr,
}

/// `struct fi_fabric_attr`'s first fields.
#[repr(C)]
struct FiFabricAttr {
    fabric: *mut c_void,
    name: *const c_char,
    prov_name: *const c_char,
}

/// `FI_PROV_ATTR_ONLY`: one entry per provider, what `fi_info -l` asks for.
const FI_PROV_ATTR_ONLY: u64 = 1 << 54;

/// The line between the parameters and the providers in [`libfabric`]'s text.
pub const PROVIDERS_MARK: &str = "# providers (fi_info -l)";

/// The registry of the libfabric at `path`: a first line `libfabric: MAJOR.MINOR`
/// (`fi_version()`), its parameters as `fi_info -e` prints them (`# FI_NAME: ` and its
/// help, from `fi_getparams`), then after [`PROVIDERS_MARK`] its providers as `fi_info -l`
/// prints them (`NAME:`, from `fi_getinfo` with `FI_PROV_ATTR_ONLY`).
pub fn libfabric(path: &Path) -> Result<String, ProbeError> {
    let lib = open(path)?;
    type GetParams = unsafe extern "C" fn(*mut *mut FiParam, *mut c_int) -> c_int;
    type FreeParams = unsafe extern "C" fn(*mut FiParam);
    type Version = unsafe extern "C" fn() -> u32;
    type GetInfo = unsafe extern "C" fn(
        u32,
        *const c_char,
        *const c_char,
        u64,
        *const c_void,
        *mut *mut FiInfo,
    ) -> c_int;
    type FreeInfo = unsafe extern "C" fn(*mut FiInfo);
    let symbol = |name: &[u8]| {
        ProbeError(format!(
            "{} has no {}",
            path.display(),
            String::from_utf8_lossy(&name[..name.len() - 1])
        ))
    };
    // SAFETY: the three functions have these C signatures in every libfabric since 1.0
    // (`rdma/fabric.h`); the symbols stay valid while `lib` lives, to the end of this
    // function.
    let (get, free, version, getinfo, freeinfo) = unsafe {
        (
            lib.get::<GetParams>(b"fi_getparams\0")
                .map_err(|_| symbol(b"fi_getparams\0"))?,
            lib.get::<FreeParams>(b"fi_freeparams\0")
                .map_err(|_| symbol(b"fi_freeparams\0"))?,
            lib.get::<Version>(b"fi_version\0")
                .map_err(|_| symbol(b"fi_version\0"))?,
            lib.get::<GetInfo>(b"fi_getinfo\0")
                .map_err(|_| symbol(b"fi_getinfo\0"))?,
            lib.get::<FreeInfo>(b"fi_freeinfo\0")
                .map_err(|_| symbol(b"fi_freeinfo\0"))?,
        )
    };
    // SAFETY: fi_version takes nothing and returns a number.
    let v = unsafe { version() };
    let mut out = format!("libfabric: {}.{}\n", v >> 16, v & 0xffff);
    let mut params: *mut FiParam = std::ptr::null_mut();
    let mut count: c_int = 0;
    // SAFETY: fi_getparams fills the two out-pointers (it loads the providers first, as
    // fi_info does); on success `params` holds `count` entries and a last one whose name
    // is NULL, freed below with fi_freeparams.
    let rc = unsafe { get(&mut params, &mut count) };
    if rc != 0 {
        return Err(ProbeError(format!("fi_getparams returned {rc}")));
    }
    for i in 0..usize::try_from(count).unwrap_or(0) {
        // SAFETY: `i < count` entries are initialized by fi_getparams; their strings are
        // NUL-terminated or NULL.
        let (name, help) = unsafe {
            let p = &*params.add(i);
            (text(p.name), text(p.help))
        };
        if let Some(name) = name {
            out.push_str(&format!("# {name}: \n# {}\n\n", help.unwrap_or_default()));
        }
    }
    if !params.is_null() {
        // SAFETY: `params` came from fi_getparams and is freed once.
        unsafe { free(params) };
    }
    out.push_str(PROVIDERS_MARK);
    out.push('\n');
    let mut info: *mut FiInfo = std::ptr::null_mut();
    // SAFETY: node, service and hints may be NULL; on success `info` is a list that
    // fi_freeinfo frees below. The version asked is the library's own.
    let rc = unsafe {
        getinfo(
            v,
            std::ptr::null(),
            std::ptr::null(),
            FI_PROV_ATTR_ONLY,
            std::ptr::null(),
            &mut info,
        )
    };
    if rc == 0 {
        let mut cur = info;
        while !cur.is_null() {
            // SAFETY: `cur` is an entry of the list fi_getinfo returned; its fabric
            // attributes, when present, carry the provider's NUL-terminated name.
            let (name, next) = unsafe {
                let entry = &*cur;
                let name = if entry.fabric_attr.is_null() {
                    None
                } else {
                    text((*entry.fabric_attr).prov_name)
                };
                (name, entry.next)
            };
            if let Some(name) = name {
                out.push_str(&format!("{name}:\n"));
            }
            cur = next;
        }
        // SAFETY: the list came from fi_getinfo and is freed once.
        unsafe { freeinfo(info) };
    }
    Ok(out)
}

/// The API version of the libfabric at `path` (`fi_version()`: major and minor), without
/// starting it: `fi_version` only returns the numbers the library was built with, and
/// libfabric reads its environment and loads its providers on the first `fi_getinfo` or
/// `fi_getparams`, which this never calls. A process that already maps the file (a rank
/// whose MPI library links it) gets its own copy's numbers, and the later settings of its
/// environment are still read when MPI starts libfabric.
pub fn libfabric_version(path: &Path) -> Result<(u32, u32), ProbeError> {
    // SAFETY: loading runs constructors; libfabric itself registers none (it starts on
    // its first fi_getinfo), and in a rank whose MPI library links it the file is
    // already mapped, so loading it again only counts a reference.
    let lib = unsafe { libloading::Library::new(path) }
        .map_err(|e| ProbeError(format!("cannot load {}: {e}", path.display())))?;
    type Version = unsafe extern "C" fn() -> u32;
    // SAFETY: fi_version has this C signature in every libfabric since 1.0
    // (`rdma/fabric.h`); the symbol stays valid while `lib` lives.
    let version = unsafe { lib.get::<Version>(b"fi_version\0") }
        .map_err(|_| ProbeError(format!("{} has no fi_version", path.display())))?;
    // SAFETY: fi_version takes nothing, touches no state and returns a number.
    let v = unsafe { version() };
    Ok((v >> 16, v & 0xffff))
}

/// A C string, or `None` for NULL.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that lives through the call.
unsafe fn text(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: the caller's promise.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

/// `UCS_CONFIG_PRINT_CONFIG | UCS_CONFIG_PRINT_DOC | UCS_CONFIG_PRINT_HIDDEN`
/// (`ucs/config/types.h`, the same bits from UCX 1.6 to 1.20): what `ucx_info -c -f`
/// prints.
const PRINT_CONFIG_DOC_HIDDEN: c_int = 1 | 4 | 8;

/// The registry of the UCX whose `libucp` is at `ucp` (its `libucs` and `libuct` beside
/// it) as `ucx_info -c -f` prints it, after a first line `# Version VERSION`.
pub fn ucx(ucp: &Path) -> Result<String, ProbeError> {
    let dir = ucp.parent().unwrap_or(Path::new("."));
    let ucs = open(&dir.join("libucs.so.0"))?;
    let uct = open(&dir.join("libuct.so.0"))?;
    let ucp = open(ucp)?;
    type VersionString = unsafe extern "C" fn() -> *const c_char;
    type Query = unsafe extern "C" fn(*mut *mut *mut c_void, *mut c_uint) -> c_int;
    type Release = unsafe extern "C" fn(*mut *mut c_void);
    type PrintAll =
        unsafe extern "C" fn(*mut libc::FILE, *const c_char, c_int, *mut c_void, *const c_char);
    let missing = |what: &str| ProbeError(format!("this UCX has no {what}"));
    // SAFETY: the signatures are those of `ucp/api/ucp.h`, `uct/api/uct.h` and
    // `ucs/config/parser.h`. ucs_config_parser_print_all_opts took four arguments before
    // UCX 1.14 and five since (a filter, NULL for none): the fifth is passed always, in a
    // register the older function does not read (the x86-64 and AArch64 C calling
    // conventions). `ucs_config_global_list` is a data symbol: its address is taken, not
    // called. The libraries stay loaded to the end of this function.
    let (version, query, release, print_all, list) = unsafe {
        (
            ucp.get::<VersionString>(b"ucp_get_version_string\0")
                .map_err(|_| missing("ucp_get_version_string"))?,
            uct.get::<Query>(b"uct_query_components\0")
                .map_err(|_| missing("uct_query_components"))?,
            uct.get::<Release>(b"uct_release_component_list\0")
                .map_err(|_| missing("uct_release_component_list"))?,
            ucs.get::<PrintAll>(b"ucs_config_parser_print_all_opts\0")
                .map_err(|_| missing("ucs_config_parser_print_all_opts"))?,
            ucs.get::<*mut c_void>(b"ucs_config_global_list\0")
                .map_err(|_| missing("ucs_config_global_list"))?,
        )
    };
    // SAFETY: returns a static string.
    let v = unsafe { text(version()) }.unwrap_or_else(|| "?".into());
    // Listing the components loads UCX's transport modules (ib, rdmacm, …), whose
    // configuration tables join the global list, as ucx_info does before printing.
    let mut components: *mut *mut c_void = std::ptr::null_mut();
    let mut n: c_uint = 0;
    // SAFETY: fills the two out-pointers; the list is released below.
    if unsafe { query(&mut components, &mut n) } == 0 && !components.is_null() {
        // SAFETY: the list came from uct_query_components and is released once.
        unsafe { release(components) };
    }
    let mut buf: *mut c_char = std::ptr::null_mut();
    let mut size: libc::size_t = 0;
    // SAFETY: open_memstream gives a FILE that writes into a buffer it allocates; `buf`
    // and `size` are valid after fclose.
    let stream = unsafe { libc::open_memstream(&mut buf, &mut size) };
    if stream.is_null() {
        return Err(ProbeError("open_memstream failed".into()));
    }
    // SAFETY: `stream` is open; the prefix is a NUL-terminated literal; `*list` is the
    // address of UCX's list head (the symbol's address is what dlsym returned); the
    // filter is NULL.
    unsafe {
        print_all(
            stream,
            c"UCX_".as_ptr(),
            PRINT_CONFIG_DOC_HIDDEN,
            *list,
            std::ptr::null(),
        );
        libc::fclose(stream);
    }
    // SAFETY: after fclose, `buf` holds `size` bytes written by the stream (malloc'd),
    // freed here once.
    let printed = unsafe {
        let bytes = std::slice::from_raw_parts(buf as *const u8, size);
        let s = String::from_utf8_lossy(bytes).into_owned();
        libc::free(buf as *mut c_void);
        s
    };
    Ok(format!("# Version {v}\n{printed}"))
}
