"""MkDocs hooks of the documentation site (``mkdocs.yml``: ``hooks``).

- The package's source folders (``envs``, ``baselines``, ``training``) are the subpackages of the
  namespace package ``crowdsteer`` (``pyproject.toml``: ``package-dir``), so no folder of the
  checkout is named ``crowdsteer``. The API reference reads the source statically (griffe), which
  looks packages up by folder name: ``on_startup``, before any plugin reads its configuration,
  lays out ``build/docs_src/crowdsteer/`` as links to the three folders, the path ``mkdocs.yml``
  gives the handler.
- The chapters link to the README's sections (``../README.md#scenarios``), which GitHub shows;
  on the site the README is not a page, and the home page holds those sections (included from
  the README), so ``on_page_markdown`` points such links at the home page.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "build" / "docs_src" / "crowdsteer"
SUBPACKAGES = ("envs", "baselines", "training")
README_LINK = re.compile(r"\]\((?:\.\./)+README\.md(#[^)]*)?\)")


def on_startup(command, dirty, **kwargs):
    SOURCE.mkdir(parents=True, exist_ok=True)
    for name in SUBPACKAGES:
        link = SOURCE / name
        if link.is_symlink() and link.resolve() == ROOT / name:
            continue
        if link.is_symlink():
            link.unlink()
        link.symlink_to(ROOT / name, target_is_directory=True)


def on_page_markdown(markdown, page, **kwargs):
    depth = page.file.src_uri.count("/")
    home = "../" * depth + "index.md"
    return README_LINK.sub(lambda m: f"]({home}{m.group(1) or ''})", markdown)
