#!/bin/sh
# embed.sh SYMBOL FILE: print C source defining `const char SYMBOL[]` (the
# file's bytes, NUL-terminated) and `const size_t SYMBOL_len`.
set -eu
sym=$1 file=$2
printf '/* Generated from %s by scripts/embed.sh; do not edit. */\n' "$file"
printf '#include <stddef.h>\n\n'
printf 'extern const char %s[];\nextern const size_t %s_len;\n\n' "$sym" "$sym"
printf 'const char %s[] =\n' "$sym"
# One string literal per input line: escape backslash, quote and tab.
LC_ALL=C awk '{
	gsub(/\\/, "\\\\\\\\"); gsub(/"/, "\\\""); gsub(/\t/, "\\t"); gsub(/\?/, "\\?")
	printf "\t\"%s\\n\"\n", $0
}' "$file"
printf '\t"";\n'
printf 'const size_t %s_len = sizeof(%s) - 1;\n' "$sym" "$sym"
