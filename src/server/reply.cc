#include "server/reply.h"

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

}  // namespace kvrocks::reply
