#include "replication/master_link.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

namespace kvrocks {
namespace {

// What Replica::StreamCommands does with the buffer: Fill appends a read of up
// to 64 KiB, the applier consumes every complete command, Compact runs. Here
// each read leaves the start of a command (100 bytes) unconsumed.
void StreamChunk(MasterLink* link) {
  std::string& buf = link->buffer();
  buf.append(64 * 1024, 'x');
  link->buffer_pos() = buf.size() - 100;
  link->Compact();
}

TEST(MasterLinkTest, AStreamKeepsItsRoom) {
  std::atomic<bool> stop{false};
  MasterLink link(&stop);
  for (int i = 0; i < 64; i++) StreamChunk(&link);  // 4 MiB: the room grows to what a stream needs
  const char* data = link.buffer().data();
  const size_t capacity = link.buffer().capacity();
  EXPECT_LE(capacity, size_t{4} << 20);
  for (int i = 0; i < 1024; i++) {  // 64 MiB more: no reallocation (each copied the buffer into new pages)
    StreamChunk(&link);
    ASSERT_EQ(link.buffer().data(), data) << "after " << i << " reads";
  }
  EXPECT_EQ(link.buffer().capacity(), capacity);
}

TEST(MasterLinkTest, TheRoomOfABigCommandIsGivenBack) {
  std::atomic<bool> stop{false};
  MasterLink link(&stop);
  std::string& buf = link.buffer();
  buf.assign(32 << 20, 'x');  // a 32 MiB bulk, read whole, then the start of the next command
  buf.append(100, 'y');
  link.buffer_pos() = 32 << 20;
  link.Compact();
  EXPECT_EQ(link.buffer(), std::string(100, 'y'));
  EXPECT_EQ(link.buffer_pos(), 0u);
  EXPECT_LT(link.buffer().capacity(), size_t{1} << 20);
}

TEST(MasterLinkTest, ConsumedInputIsDropped) {
  std::atomic<bool> stop{false};
  MasterLink link(&stop);
  link.buffer() = "*1\r\n$4\r\nPING\r\n*1\r\n$4";
  link.buffer_pos() = 14;
  link.Compact();  // a little consumed, a partial command left: nothing moves yet
  EXPECT_EQ(link.buffer_pos(), 14u);
  link.buffer_pos() = link.buffer().size();
  link.Compact();
  EXPECT_EQ(link.buffer(), "");
  EXPECT_EQ(link.buffer_pos(), 0u);
}

}  // namespace
}  // namespace kvrocks
