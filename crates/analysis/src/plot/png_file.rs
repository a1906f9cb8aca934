//! PNG encoding of the RGB buffer plotters draws into.

use crate::error::Error;
use crate::load::Result;

/// Encodes 8-bit RGB `pixels` of `size` (width, height) as a PNG file.
pub fn encode(pixels: &[u8], size: (u32, u32)) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, size.0, size.1);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let fail = |e: png::EncodingError| Error::Draw(format!("PNG encoding: {e}"));
        let mut writer = encoder.write_header().map_err(fail)?;
        writer.write_image_data(pixels).map_err(fail)?;
        writer.finish().map_err(fail)?;
    }
    Ok(out)
}

/// Decodes a PNG made by [`encode`] back to (width, height, RGB pixels); for tests and
/// checks.
pub fn decode(bytes: &[u8]) -> Result<(u32, u32, Vec<u8>)> {
    let fail = |e: png::DecodingError| Error::Draw(format!("PNG decoding: {e}"));
    let decoder = png::Decoder::new(bytes);
    let mut reader = decoder.read_info().map_err(fail)?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).map_err(fail)?;
    if info.color_type != png::ColorType::Rgb || info.bit_depth != png::BitDepth::Eight {
        return Err(Error::Draw("PNG decoding: not 8-bit RGB".into()));
    }
    buf.truncate(info.buffer_size());
    Ok((info.width, info.height, buf))
}
