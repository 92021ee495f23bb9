"""Where each rule's documentation is: `docs/rules.md` of ddplint's repository, one anchor a
rule (`docs/rules.md#ddp005`), as ruff's `url` names each rule's page.

The page comes from the distribution's metadata (`[project.urls]` in pyproject.toml): a URL
labelled `Rules` is the page itself; else one labelled `Repository`, `Source` or `Homepage`
is the repository, whose `main` branch holds the page. Without either, there is no URL."""

from __future__ import annotations

import functools
from importlib import metadata

RULES_PAGE = "docs/rules.md"
_REPOSITORY_LABELS = ("repository", "source", "source code", "homepage")


def rule_url(code: str) -> str | None:
    """The documentation of the rule `code` (`DDP005`), or None where none is known."""
    page = rules_page()
    return f"{page}#{code.lower()}" if page else None


@functools.cache
def rules_page() -> str | None:
    """The URL of the rules page, from the installed distribution's `Project-URL`s."""
    try:
        entries = metadata.metadata("ddplint").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    urls: dict[str, str] = {}
    for entry in entries:
        label, _, url = entry.partition(",")
        urls.setdefault(label.strip().lower(), url.strip())
    if urls.get("rules"):
        return urls["rules"]
    for label in _REPOSITORY_LABELS:
        if urls.get(label):
            repository = urls[label].rstrip("/").removesuffix(".git")
            return f"{repository}/blob/main/{RULES_PAGE}"
    return None
