#include "types/string_editor.h"

#include <algorithm>

namespace kvrocks {

Status StringEditor::Open() {
  Status s = db_->Load(key_, &lk_);
  if (!s.ok()) return s;
  if (!lk_.live) return Status::OK();
  if (lk_.type != RedisType::kString) return Status::RedisError(kWrongTypeError);
  Metadata meta;
  s = meta.Decode(lk_.raw);
  if (!s.ok()) return s;
  if (meta.fragmented) {
    fragmented_ = true;
    version_ = meta.version;
    size_ = meta.size;
    owner_ = meta.owner;
    owner_db_ = meta.owner_db;
    return Status::OK();
  }
  s = str_.ReadRange(key_, lk_.raw, 0, UINT64_MAX, &whole_);
  size_ = whole_.size();
  return s;
}

void StringEditor::Grow(uint64_t n) {
  SplitIfBig();
  if (n <= size_) return;
  grown_ = true;
  if (!fragmented_ && n > split_at_) Split(false);  // never materialize a big sparse value
  size_ = n;
  if (!fragmented_) whole_.resize(n, '\0');
}

Status StringEditor::Read(uint64_t offset, size_t n, uint8_t* buf) {
  if (!fragmented_) {
    std::copy_n(whole_.data() + offset, n, reinterpret_cast<char*>(buf));
    return Status::OK();
  }
  for (size_t i = 0; i < n; i++) {
    std::string* frag;
    Status s = Fragment((offset + i) / kStringFragmentBytes, &frag);
    if (!s.ok()) return s;
    buf[i] = static_cast<uint8_t>((*frag)[(offset + i) % kStringFragmentBytes]);
  }
  return Status::OK();
}

Status StringEditor::Write(uint64_t offset, size_t n, const uint8_t* buf) {
  SplitIfBig();
  changed_ = true;
  if (!fragmented_) {
    std::copy_n(reinterpret_cast<const char*>(buf), n, whole_.data() + offset);
    return Status::OK();
  }
  // A fragment at a time: a long write (APPEND of a big value) copies each byte once.
  for (size_t done = 0; done < n;) {
    uint64_t at = offset + done;
    std::string* frag;
    Status s = Fragment(at / kStringFragmentBytes, &frag);
    if (!s.ok()) return s;
    size_t in = at % kStringFragmentBytes, len = std::min<size_t>(n - done, kStringFragmentBytes - in);
    std::copy_n(reinterpret_cast<const char*>(buf) + done, len, frag->data() + in);
    dirty_.insert(static_cast<uint32_t>(at / kStringFragmentBytes));
    done += len;
  }
  return Status::OK();
}

void StringEditor::Commit(uint8_t encoding_flag) {
  if (!changed_ && !grown_) {
    if (lk_.live && !fragmented_) str_.MarkRaw(&lk_);
    return;
  }
  uint64_t expire = lk_.live ? lk_.expire_ms : 0;
  if (!fragmented_) {
    if (whole_.size() <= split_at_) {
      str_.WriteValue(key_, &lk_, whole_, expire, encoding_flag);
    } else {
      str_.WriteFragments(key_, &lk_, whole_, expire);
    }
    return;
  }
  for (auto& [index, bytes] : frags_) {
    if (dirty_.count(index) == 0) continue;
    std::string k = EncodeFragmentKey(SubkeyDb(), SubkeyName(), version_, index);
    size_t used = bytes.find_last_not_of('\0');
    if (used == std::string::npos) {
      db_->ctx()->Delete(ColumnFamily::kSubkey, k);
    } else {
      db_->ctx()->Put(ColumnFamily::kSubkey, k, std::string_view(bytes).substr(0, used + 1));
    }
  }
  db_->Store(key_, &lk_, EncodeStringRef(version_, size_, expire, true, owner_, owner_db_), expire);
}

void StringEditor::SplitIfBig() {
  if (!fragmented_ && size_ > split_at_) Split(true);
}

void StringEditor::Split(bool relayout) {
  version_ = str_.WriteFragments(key_, &lk_, whole_, lk_.live ? lk_.expire_ms : 0, relayout && lk_.live);
  owner_.clear();  // a new version, under the key's own db and name
  owner_db_ = -1;
  fragmented_ = true;
  whole_.clear();
  whole_.shrink_to_fit();
}

Status StringEditor::Fragment(uint64_t index, std::string** frag) {
  auto it = frags_.find(static_cast<uint32_t>(index));
  if (it == frags_.end()) {
    std::string bytes;
    Status s = db_->ctx()->Get(ColumnFamily::kSubkey,
                               EncodeFragmentKey(SubkeyDb(), SubkeyName(), version_, static_cast<uint32_t>(index)),
                               &bytes);
    if (!s.ok() && !s.IsNotFound()) return s;
    bytes.resize(kStringFragmentBytes, '\0');
    it = frags_.emplace(static_cast<uint32_t>(index), std::move(bytes)).first;
  }
  *frag = &it->second;
  return Status::OK();
}

}  // namespace kvrocks
