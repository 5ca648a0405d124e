// String helpers with Redis' exact parsing and formatting rules.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvrocks {

std::string ToLower(std::string_view s);
std::string ToUpper(std::string_view s);
// Case-insensitive and binary-safe: what Redis' dict lookups do (command,
// subcommand, config and function names).
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// Case-insensitive, each side read up to its first NUL: what Redis' strcasecmp
// of an argument does, and so how Redis matches option tokens ("NX\0junk" is NX).
bool TokenEquals(std::string_view a, std::string_view b);

// What C's "%s" prints of a binary-safe argument: its bytes before the first
// NUL. Redis quotes arguments in most error messages that way
// (addReplyErrorFormat), so "OBJECT a\0b" is "unknown subcommand 'a'".
std::string CString(std::string_view s);

// Parses a decimal int64 as Redis' string2ll does: no spaces, no '+', no
// leading zeros, no "-0". Returns false when s is not such a number.
bool ParseInt64(std::string_view s, int64_t* out);

// Parses a double as Redis' string2d / getDoubleFromObject does: rejects empty
// input, leading/trailing spaces and NaN; accepts "inf", "-inf", "1e10" ...
bool ParseDouble(std::string_view s, double* out);
// strtod up to the first NUL, as Redis reads score ranges (zslParseRange) and
// SORT weights: leading white space and hex accepted, "" is 0, NaN refused.
// *range_error (if given) tells whether the value over- or underflowed.
bool ParseStrtod(std::string_view s, double* out, bool* range_error = nullptr);
bool ParseLongDouble(std::string_view s, long double* out);

// "%f" without trailing zeros (and then without the '.'), as Redis' sprintf
// plus trimDoubleString: 50 -> "50", 99.9 -> "99.9".
std::string FormatTrimmedDouble(double v);

// Formats like Redis' ld2string(LD_STR_HUMAN) (INCRBYFLOAT replies).
std::string FormatLongDoubleHuman(long double v);

// Glob-style pattern match of Redis' stringmatchlen (*, ?, [..], \).
bool StringMatch(std::string_view pattern, std::string_view str, bool nocase = false);

// Redis Cluster hash slot of a key (CRC16 of the key or its {hash tag}, mod 16384).
uint16_t KeySlot(std::string_view key);

// Appends s quoted as Redis' sdscatrepr does ("a\"b\x01"): MONITOR lines, the
// Lua debugger's values.
void AppendRepr(std::string* out, std::string_view s);

// Splits an inline command line as Redis' sdssplitargs does. Returns false
// on unbalanced quotes.
bool SplitArgs(std::string_view line, std::vector<std::string>* out);

}  // namespace kvrocks
