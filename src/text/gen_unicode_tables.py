#!/usr/bin/env python3
# Generates unicode_tables.cpp: the character classes, lower-case mapping and accent-stripping table that
# BERT's BasicTokenizer takes from Python's unicodedata, the classes of GPT-2's split pattern, the grapheme
# cluster break properties SentencePiece's normaliser (as the tokenizers library runs it) needs, and what NFC
# needs (canonical combining classes, canonical decompositions, primary composites). Run by hand, with
# the `regex` module installed (transformers depends on it), when the Unicode version should move:
#   .venv/bin/python src/text/gen_unicode_tables.py > src/text/unicode_tables.cpp
# Python's own unicodedata is the source where Hugging Face's Python tokenizer consults it; `regex` gives the
# Grapheme_Cluster_Break and Extended_Pictographic properties, which unicodedata lacks.
import sys
import unicodedata as ud

import regex

# Must match unicode.h's CharClass.
OTHER, WHITESPACE, CONTROL, PUNCT, CJK, MARK = range(6)
MAX_CP = 0x110000


def is_surrogate(cp):
    return 0xD800 <= cp <= 0xDFFF


def is_hangul_syllable(cp):
    return 0xAC00 <= cp <= 0xD7A3


def is_cjk(cp):  # transformers' BasicTokenizer._is_chinese_char, verbatim ranges
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def char_class(cp):
    # Precedence follows the tokenizer's order: clean_text drops controls and maps whitespace first,
    # then CJK characters are padded, then punctuation splits.
    if is_surrogate(cp):
        return CONTROL
    c = chr(cp)
    cat = ud.category(c)
    if c in "\t\n\r ":
        return WHITESPACE
    if cat.startswith("C"):
        return CONTROL
    if cat == "Zs":
        return WHITESPACE
    if is_cjk(cp):
        return CJK
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126 or cat.startswith("P"):
        return PUNCT
    if cat == "Mn":
        return MARK
    return OTHER


# Must match unicode.h's SplitClass: the classes of GPT-2's split pattern (\p{L}, \p{N}, \s).
SPLIT_OTHER, SPLIT_LETTER, SPLIT_NUMBER, SPLIT_SPACE = range(4)


def is_white_space(cp):  # Unicode's White_Space property (= Oniguruma's \s)
    return (0x9 <= cp <= 0xD or cp in (0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000)
            or 0x2000 <= cp <= 0x200A)


def split_class(cp):
    if is_white_space(cp):
        return SPLIT_SPACE
    if is_surrogate(cp):
        return SPLIT_OTHER
    cat = ud.category(chr(cp))
    if cat.startswith("L"):
        return SPLIT_LETTER
    if cat.startswith("N"):
        return SPLIT_NUMBER
    return SPLIT_OTHER


# Must match unicode.h's GraphemeBreak; kExtendedPictographic is bit 4.
GRAPHEME_BREAKS = ["Other", "CR", "LF", "Control", "Extend", "ZWJ", "Regional_Indicator", "Prepend", "SpacingMark",
                   "L", "V", "T", "LV", "LVT"]
EXTENDED_PICTOGRAPHIC = 16


def grapheme_classes():
    """(Grapheme_Cluster_Break | Extended_Pictographic bit) of every code point."""
    out = [0] * MAX_CP
    for value, name in enumerate(GRAPHEME_BREAKS[1:], start=1):
        pattern = regex.compile(r"\p{Grapheme_Cluster_Break=%s}" % name)
        for cp in range(MAX_CP):
            if not is_surrogate(cp) and pattern.match(chr(cp)):
                out[cp] = value
    pict = regex.compile(r"\p{Extended_Pictographic}")
    for cp in range(MAX_CP):
        if not is_surrogate(cp) and pict.match(chr(cp)):
            out[cp] |= EXTENDED_PICTOGRAPHIC
    return out


def emit_u32_list(name, values, per_line):
    print(f"const uint32_t {name}[] = {{")
    for i in range(0, len(values), per_line):
        print("    " + ", ".join(f"0x{v:X}" for v in values[i:i + per_line]) + ",")
    print("};")
    print(f"const size_t {name}Count = sizeof({name}) / sizeof({name}[0]);")
    print()


def run_starts(classes, bits):
    """(first code point << bits) | class for each run of equal classes, code point by code point."""
    runs, prev = [], None
    for cp, k in enumerate(classes):
        if k != prev:
            runs.append((cp << bits) | k)
            prev = k
    return runs


def nfc_tables():
    """(combining class runs, canonical decompositions as (cp, first, second or 0), compositions as
    (first, second, composite)) of every code point but Hangul syllables, which compose algorithmically."""
    ccc_runs = run_starts((0 if is_surrogate(cp) else ud.combining(chr(cp)) for cp in range(MAX_CP)), 8)
    decompositions, compositions = [], []
    for cp in range(MAX_CP):
        if is_surrogate(cp) or is_hangul_syllable(cp):
            continue
        d = ud.decomposition(chr(cp))
        if not d or d.startswith("<"):  # none, or a compatibility one
            continue
        parts = [int(x, 16) for x in d.split()]
        assert len(parts) in (1, 2), hex(cp)
        decompositions.append((cp, parts[0], parts[1] if len(parts) == 2 else 0))
        # A primary composite: two parts, and NFC keeps it (not excluded, not a non-starter decomposition).
        if len(parts) == 2 and ud.normalize("NFC", chr(cp)) == chr(cp):
            compositions.append((parts[0], parts[1], cp))
    compositions.sort()
    return ccc_runs, decompositions, compositions


def emit_triples(name, triples):
    print(f"const uint32_t {name}[][3] = {{")
    for i in range(0, len(triples), 4):
        print("    " + " ".join(f"{{0x{a:X}, 0x{b:X}, 0x{c:X}}}," for a, b, c in triples[i:i + 4]))
    print("};")
    print(f"const size_t {name}Count = sizeof({name}) / sizeof({name}[0]);")
    print()


def main():
    runs = run_starts((char_class(cp) for cp in range(MAX_CP)), 3)
    split_runs = run_starts((split_class(cp) for cp in range(MAX_CP)), 2)
    grapheme_runs = run_starts(grapheme_classes(), 5)

    lower_runs = []  # (first, last, delta, stride)
    for cp in range(MAX_CP):
        if is_surrogate(cp):
            continue
        low = chr(cp).lower()
        if low == chr(cp):
            continue
        # Only U+0130 lower-cases to two characters ("i" + U+0307); the mark is stripped later anyway.
        delta = ord(low[0]) - cp
        if lower_runs:
            first, last, d, stride = lower_runs[-1]
            step = cp - last
            if d == delta and step in (1, 2) and stride in (0, step):
                lower_runs[-1] = (first, cp, d, step)
                continue
        lower_runs.append((cp, cp, delta, 0))

    single, multi = [], []
    for cp in range(MAX_CP):
        if is_surrogate(cp) or is_hangul_syllable(cp):  # Hangul decomposes algorithmically
            continue
        c = chr(cp)
        if ud.category(c) == "Mn":
            continue
        stripped = "".join(x for x in ud.normalize("NFD", c) if ud.category(x) != "Mn")
        if stripped == c:
            continue
        assert 1 <= len(stripped) <= 3, hex(cp)
        if len(stripped) == 1:
            single.extend([cp, ord(stripped)])
        else:
            multi.append((cp, [ord(x) for x in stripped] + [0] * (3 - len(stripped))))

    print("// Generated by src/text/gen_unicode_tables.py from Python's unicodedata "
          f"(Unicode {ud.unidata_version}); do not edit by hand.")
    print("// Character classes, lower-case runs and NFD-minus-marks mappings for the BERT basic tokenizer;")
    print("// the letter / number / space classes of byte-level BPE's split pattern; grapheme cluster breaks;")
    print("// NFC's combining classes, decompositions and compositions.")
    print('#include "text/unicode_tables.h"')
    print()
    print("namespace ragmig::text::unicode_data {")
    print()
    print(f'const char kUnicodeVersion[] = "{ud.unidata_version}";')
    print()
    print("// (first code point << 3) | CharClass; each run lasts until the next one starts.")
    emit_u32_list("kClassRuns", runs, 10)
    print("// (first code point << 2) | SplitClass; each run lasts until the next one starts.")
    emit_u32_list("kSplitRuns", split_runs, 10)
    print(f"// (first code point << 5) | GraphemeBreak | Extended_Pictographic << 4, from regex {regex.__version__}.")
    emit_u32_list("kGraphemeRuns", grapheme_runs, 10)
    print("// Simple lower-case mapping as runs: first, last, delta, stride (0 = single code point).")
    print("const LowerRun kLowerRuns[] = {")
    for i in range(0, len(lower_runs), 4):
        print("    " + " ".join(f"{{0x{f:X}, 0x{l:X}, {d}, {s}}}," for f, l, d, s in lower_runs[i:i + 4]))
    print("};")
    print("const size_t kLowerRunsCount = sizeof(kLowerRuns) / sizeof(kLowerRuns[0]);")
    print()
    print("// Code point, then its NFD decomposition without Mn marks when that is one code point.")
    emit_u32_list("kStripSingle", single, 10)
    print("// Code points whose NFD decomposition without Mn marks is two or three code points.")
    print("const StripMulti kStripMulti[] = {")
    for cp, out in multi:
        print(f"    {{0x{cp:X}, {{0x{out[0]:X}, 0x{out[1]:X}, 0x{out[2]:X}}}}},")
    print("};")
    print("const size_t kStripMultiCount = sizeof(kStripMulti) / sizeof(kStripMulti[0]);")
    print()
    ccc_runs, decompositions, compositions = nfc_tables()
    print("// (first code point << 8) | canonical combining class; each run lasts until the next one starts.")
    emit_u32_list("kCombiningClassRuns", ccc_runs, 10)
    print("// Canonical decompositions, one level: code point, first, second (0 for a singleton); by code point.")
    emit_triples("kCanonicalDecompositions", decompositions)
    print("// Primary composites: first, second, composite; by (first, second).")
    emit_triples("kCompositions", compositions)
    print("}  // namespace ragmig::text::unicode_data")


if __name__ == "__main__":
    sys.exit(main())
