"""Languages the code reader parses: grammar wheel, suffixes, and which nodes define symbols.

Data, not branches: adding a language is one entry here plus its grammar wheel in pyproject.toml.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class LanguageSpec:
    name: str
    module: str  # the grammar wheel's import name
    loader: str  # the function in it that returns the language pointer
    suffixes: frozenset[str]
    #: Node types that define a symbol worth an outline entry and its own passage.
    definitions: frozenset[str]
    #: Node types whose lines are comments (dropped by the compact view).
    comments: frozenset[str] = frozenset({"comment"})


def _spec(
    name: str, module: str, suffixes: str, definitions: str, *, loader: str = "language", comments: str = "comment"
) -> LanguageSpec:
    return LanguageSpec(
        name=name,
        module=module,
        loader=loader,
        suffixes=frozenset(suffixes.split()),
        definitions=frozenset(definitions.split()),
        comments=frozenset(comments.split()),
    )


_JS_DEFS = (
    "class_declaration function_declaration generator_function_declaration method_definition "
    "variable_declarator"  # `const handler = () => ...`: kept only when its value is a function
)
_TS_DEFS = _JS_DEFS + " abstract_class_declaration interface_declaration type_alias_declaration enum_declaration"

LANGUAGES: tuple[LanguageSpec, ...] = (
    _spec("python", "tree_sitter_python", ".py .pyi", "class_definition function_definition"),
    _spec("javascript", "tree_sitter_javascript", ".js .mjs .cjs .jsx", _JS_DEFS),
    _spec("typescript", "tree_sitter_typescript", ".ts .mts .cts", _TS_DEFS, loader="language_typescript"),
    _spec("tsx", "tree_sitter_typescript", ".tsx", _TS_DEFS, loader="language_tsx"),
    _spec("go", "tree_sitter_go", ".go", "function_declaration method_declaration type_spec"),
    _spec(
        "rust",
        "tree_sitter_rust",
        ".rs",
        "function_item struct_item enum_item trait_item impl_item mod_item union_item",
        comments="line_comment block_comment",
    ),
    _spec(
        "java",
        "tree_sitter_java",
        ".java",
        "class_declaration interface_declaration enum_declaration record_declaration method_declaration "
        "constructor_declaration",
        comments="line_comment block_comment",
    ),
    _spec("c", "tree_sitter_c", ".c .h", "function_definition struct_specifier enum_specifier union_specifier"),
    _spec(
        "cpp",
        "tree_sitter_cpp",
        ".cpp .cc .cxx .hpp .hh .hxx .c++ .h++",
        "function_definition class_specifier struct_specifier enum_specifier namespace_definition",
    ),
    _spec(
        "c_sharp",
        "tree_sitter_c_sharp",
        ".cs",
        "class_declaration interface_declaration struct_declaration enum_declaration record_declaration "
        "method_declaration constructor_declaration namespace_declaration",
    ),
    _spec("ruby", "tree_sitter_ruby", ".rb .rake", "class module method singleton_method"),
    _spec(
        "php",
        "tree_sitter_php",
        ".php",
        "class_declaration interface_declaration trait_declaration function_definition method_declaration",
        loader="language_php",
    ),
    _spec("bash", "tree_sitter_bash", ".sh .bash", "function_definition"),
)

BY_SUFFIX: dict[str, LanguageSpec] = {suffix: spec for spec in LANGUAGES for suffix in spec.suffixes}
