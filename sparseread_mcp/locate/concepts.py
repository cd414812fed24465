"""Concepts a question names by a word its document spells otherwise: query expansion from a glossary.

A question asks for "COGS" or "capital expenditure"; a filing's statement says "Cost of revenue" or
"Purchases of property, plant and equipment". No statistics over the document joins them, so a small
glossary of financial reporting does: each concept (a pattern over the question) brings the words of the
line items that carry it. The entries are the textbook ones (the primary statements by the lines they all
have, line items, and the standard ratios by the lines they are computed from), not phrasings of any
question set; `bench/recall_bench.py` measures the glossary on and off on every set.

A concept expands only in a document that never spells it as the question did: where "free cash flow" is
a table's own title, the cash flow statement's lines only pull the reading away from it. Expansion terms
are added once each and never repeat a term the question already has, so they reach the passages that
spell the concept otherwise without outweighing the question's own words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..readers.base import ParsedArtifact
from .terms import terms

#: (what the question says, what the document may say instead). Patterns are case-insensitive and whole-word.
GLOSSARY: tuple[tuple[str, str], ...] = (
    # The primary statements, by the lines every one of them has (their titles vary, and PDF text breaks
    # them: "Balance Shee t").
    (
        r"balance sheets?|statements? of financial (?:position|condition)",
        "total assets total liabilities shareholders equity",
    ),
    (
        r"income statements?|statements? of (?:income|operations|earnings)|p\s?&\s?l|profit and loss",
        "net sales revenues operating income net income per share",
    ),
    (
        r"cash flows? statements?|statements? of cash flows?",
        "cash provided used operating investing financing activities",
    ),
    # Line items.
    (r"cogs|cost of goods sold|cost of sales|cost of revenues?", "cost of sales cost of revenue goods sold"),
    # "revenue" alone is not here: a contract shares revenue, and "net sales" pulled its clauses off.
    (r"top line|net sales|(?:total|net) revenues?", "revenues net sales"),
    (r"capex|capital expenditures?|capital spending", "capital expenditures purchases of property plant and equipment"),
    (r"pp\s?&\s?e|ppn?e|fixed assets?|property,? plant,? (?:and|&) equipment", "property plant and equipment net"),
    (r"d\s?&\s?a|depreciation and amortization", "depreciation and amortization"),
    (r"sg\s?&\s?a|selling,? general,? (?:and|&) administrative", "selling general and administrative expenses"),
    (r"r\s?&\s?d", "research and development"),
    (r"ebitda", "operating income depreciation amortization"),
    (r"ebit|operating (?:income|profit)", "operating income income from operations"),
    (r"net (?:income|earnings|profit)|bottom line", "net income net earnings"),
    (r"eps|earnings per share", "earnings per share diluted"),
    (r"buybacks?|(?:share|stock) repurchases?", "repurchases of common stock treasury"),
    (r"dividends?", "dividends declared paid per share"),
    (r"debt", "long-term debt borrowings notes current portion"),
    (r"retirees?|pensions?|post-?retirement", "pension postretirement benefit payments"),
    (r"m\s?&\s?a|mergers? and acquisitions?", "acquisitions divestitures"),
    (r"organic (?:growth|sales)", "organic sales acquisitions divestitures currency"),
    # Ratios: the line items each is computed from.
    (r"gross (?:profit )?margins?", "gross profit gross margin cost of sales"),
    (r"operating (?:profit )?margins?", "operating income operating margin"),
    (r"net (?:profit |income )?margins?|profit margins?", "net income net sales"),
    (r"quick ratio|acid[- ]test", "cash equivalents marketable securities receivables total current liabilities"),
    (r"current ratio", "total current assets total current liabilities"),
    (r"cash ratio", "cash equivalents total current liabilities"),
    (r"working capital", "total current assets total current liabilities"),
    (r"liquidity", "cash equivalents current assets credit facility"),
    (r"debt[- ]to[- ]equity|leverage|gearing", "total debt total equity shareholders"),
    (r"interest coverage", "interest expense operating income"),
    (r"return on assets|roa", "net income total assets"),
    (r"return on equity|roe", "net income shareholders equity"),
    (r"return on invested capital|roic", "operating income invested capital equity debt"),
    (r"asset turnover", "total assets revenues net sales"),
    (r"fixed asset turnover", "property plant and equipment net revenues"),
    (r"inventory turnover|days (?:of )?inventory|dio", "inventories cost of sales"),
    (r"days payables?(?: outstanding)?|dpo|payables? turnover", "accounts payable cost of sales"),
    (r"days sales outstanding|dso|receivables? turnover", "accounts receivable revenues"),
    (r"cash conversion cycle", "inventories accounts receivable accounts payable"),
    (r"free cash flow|fcf", "net cash provided by operating activities purchases of property"),
    (r"dividend payout ratio|payout ratio", "dividends paid net income"),
    (r"effective tax rate", "provision for income taxes income before income taxes"),
    (r"capital[- ]intensive|capital intensity", "capital expenditures property plant and equipment total assets"),
    (r"book value", "total shareholders equity shares outstanding"),
)


#: Contract clauses that questions name by a reviewer's label (CUAD's categories: `related to "Volume
#: Restriction"`) no contract uses, each with the words its clauses are drafted in. Only labels that are not
#: drafting words themselves: "Insurance" or "Renewal Term" is what the clause says.
CLAUSES: tuple[tuple[str, str], ...] = (
    (r"volume restrictions?", "maximum minimum quantity volume capacity exceed excess"),
    (
        r"(?:revenue|profit)(?:\s*/\s*(?:revenue|profit))? sharing",
        "royalty royalties percent percentage net sales profits",
    ),
    (r"competitive restriction exceptions?", "notwithstanding except exclusive compete solicit restrict"),
    (r"joint ip ownership|joint(?:ly)? owned? (?:ip|intellectual property)", "jointly owned joint inventions co-owned"),
    (r"non-?transferable licen[cs]es?", "assign transfer sublicense non-transferable"),
    (r"irrevocable or perpetual licen[cs]es?", "irrevocable perpetual royalty-free fully paid-up"),
    (r"affiliate licen[cs]e", "affiliates subsidiaries"),
    (r"unlimited/all-you-can-eat-licen[cs]e", "unlimited enterprise-wide"),
    (r"warranty duration", "warrants warranty period"),
)
#: Whether the contract clauses expand too (for benchmarks).
EXPAND_CLAUSES = True


@dataclass(frozen=True, slots=True)
class Concept:
    """A concept the question names: how it said it, and the glossary's other spellings, as terms."""

    said: str
    terms: tuple[str, ...]


#: The glossary compiled, whole words only, each with its expansion as terms (module level: the hostile-
#: pattern audit runs every one on adversarial text).
def _compiled(entries: tuple[tuple[str, str], ...]) -> tuple[tuple[re.Pattern[str], tuple[str, ...]], ...]:
    return tuple(
        (re.compile(rf"(?<![\w&])(?:{pattern})(?![\w&])", re.IGNORECASE), tuple(terms(expansion)))
        for pattern, expansion in entries
    )


COMPILED = _compiled(GLOSSARY)
COMPILED_CLAUSES = _compiled(CLAUSES)


#: Only this much of a question is searched for concepts (every pattern is a bounded literal alternation,
#: so the scan is linear; the cap keeps a pasted document from being expanded term by term).
_SCANNED_CHARS = 8_000
#: Whether a concept expands only where the document never spells it as the question did (for benchmarks).
ONLY_WHERE_UNSPELLED = True
_STATE_KEY = "concepts.spelled"


def named_concepts(text: str) -> tuple[Concept, ...]:
    """Every concept of the glossary the text names, as it names it first."""
    scanned = text[:_SCANNED_CHARS]
    found: list[Concept] = []
    for pattern, expansion in COMPILED + (COMPILED_CLAUSES if EXPAND_CLAUSES else ()):
        match = pattern.search(scanned)
        if match:
            found.append(Concept(said=" ".join(match.group(0).split()).casefold(), terms=expansion))
    return tuple(found)


def expansion_terms(
    concepts: tuple[Concept, ...], present: tuple[str, ...] | list[str] = (), parsed: ParsedArtifact | None = None
) -> list[str]:
    """The other spellings of the concepts (of those `parsed` never spells as the question did, given a
    document), each term once, none already in `present`."""
    seen = set(present)
    added: list[str] = []
    for concept in concepts:
        if parsed is not None and ONLY_WHERE_UNSPELLED and _spelled(parsed, concept.said):
            continue
        for term in concept.terms:
            if term not in seen:
                seen.add(term)
                added.append(term)
    return added


def _spelled(parsed: ParsedArtifact, said: str) -> bool:
    """Whether the document says `said` (whole words, any case, any spacing); one literal scan, cached."""
    cache = parsed.locator_state.setdefault(_STATE_KEY, {})
    assert isinstance(cache, dict)
    if said not in cache:
        words = r"\s+".join(re.escape(word) for word in said.split())
        cache[said] = re.search(rf"(?<![\w&]){words}(?![\w&])", parsed.artifact.text, re.IGNORECASE) is not None
    return bool(cache[said])
