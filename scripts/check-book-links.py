#!/usr/bin/env python3
"""Fails when a link of the built manual (mdBook, target/book) points to nothing.

Every href and src of every page: a link within the book must name a page or file of
the book and, with a #fragment, an id on that page; a link that leaves the book (the
manual's pages link to the repository's BENCHMARKS.md, crates' READMEs, scripts) must
name a file or folder of the repository, relative to docs/, where the page's source
lies (mdBook turns `X.md` into `X.html`: the `.md` is looked for too). URLs (http:,
https:, mailto:) are not fetched.

    scripts/check-book-links.py [BOOK_DIR]     (default: target/book)
"""

import html.parser
import os
import sys
import urllib.parse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")


class Page(html.parser.HTMLParser):
    """The links and the ids of one page."""

    def __init__(self):
        super().__init__()
        self.links = []
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("href", "src") and value:
                self.links.append(value)


def parse(path):
    page = Page()
    with open(path, encoding="utf-8") as f:
        page.feed(f.read())
    return page


def in_repository(target):
    """Whether `target` (a path relative to docs/) names something of the repository."""
    path = os.path.normpath(os.path.join(DOCS, target))
    if not path.startswith(ROOT + os.sep) and path != ROOT:
        return False
    if os.path.exists(path):
        return True
    stem, ext = os.path.splitext(path)
    return ext == ".html" and os.path.exists(stem + ".md")


def main():
    book = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "book"))
    if not os.path.isfile(os.path.join(book, "index.html")):
        print(f"check-book-links: no book at {book} (build it first: make book)", file=sys.stderr)
        return 1
    pages = {}
    for folder, _, files in os.walk(book):
        for name in files:
            if name.endswith(".html"):
                path = os.path.join(folder, name)
                pages[path] = parse(path)
    problems = []
    checked = 0
    for path, page in sorted(pages.items()):
        here = os.path.dirname(path)
        shown = os.path.relpath(path, book)
        for link in page.links:
            url = urllib.parse.urlsplit(link)
            if url.scheme or link.startswith("//"):
                continue
            checked += 1
            target = urllib.parse.unquote(url.path)
            if not target:
                if url.fragment and url.fragment not in page.ids:
                    problems.append(f"{shown}: #{url.fragment}: no such id on the page")
                continue
            # An absolute path is the site's root: the book's (mdBook's 404 page links "/").
            base = book if target.startswith("/") else here
            full = os.path.normpath(os.path.join(base, target.lstrip("/")))
            if full == book or full.startswith(book + os.sep):
                if os.path.isdir(full):
                    full = os.path.join(full, "index.html")
                if not os.path.exists(full):
                    problems.append(f"{shown}: {link}: no such page or file in the book")
                elif url.fragment and full in pages and url.fragment not in pages[full].ids:
                    problems.append(f"{shown}: {link}: no such id on {os.path.relpath(full, book)}")
            elif not in_repository(os.path.relpath(full, book)):
                problems.append(f"{shown}: {link}: leaves the book to nothing of the repository")
    for p in problems:
        print(f"check-book-links: {p}", file=sys.stderr)
    if problems:
        print(f"check-book-links: {len(problems)} broken of {checked} links", file=sys.stderr)
        return 1
    print(f"check-book-links: the {checked} links of {len(pages)} pages resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
