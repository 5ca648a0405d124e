#include "server/reply.h"

#include <cmath>
#include <cstdio>

namespace kvrocks::reply {

void Error(std::string* out, std::string_view msg) {
  out->push_back('-');
  size_t start = out->size();
  out->append(msg);
  for (size_t i = start; i < out->size(); i++) {
    if ((*out)[i] == '\r' || (*out)[i] == '\n') (*out)[i] = ' ';
  }
  out->append("\r\n");
}

void Double(std::string* out, double d, int resp) {
  char buf[64];
  int n;
  if (std::isinf(d)) {
    n = std::snprintf(buf, sizeof(buf), "%s", d > 0 ? "inf" : "-inf");
  } else {
    n = std::snprintf(buf, sizeof(buf), "%.17g", d);
  }
  if (resp == 3) {
    out->push_back(',');
    out->append(buf, static_cast<size_t>(n));
    out->append("\r\n");
  } else {
    Bulk(out, std::string_view(buf, static_cast<size_t>(n)));
  }
}

}  // namespace kvrocks::reply
