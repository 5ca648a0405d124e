#include "storage/wal_archive_file_system.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "temp_storage.h"

namespace {

// Pages of path in the page cache (mincore of a mapping), -1 on error.
long ResidentPages(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size == 0) {
    close(fd);
    return st.st_size == 0 ? 0 : -1;
  }
  void* map = mmap(nullptr, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return -1;
  const long page = sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> vec((st.st_size + page - 1) / page);
  long n = -1;
  if (mincore(map, st.st_size, vec.data()) == 0) {
    n = 0;
    for (unsigned char v : vec) n += v & 1;
  }
  munmap(map, st.st_size);
  return n;
}

// tmpfs pages are the files themselves: nothing can drop them.
bool OnTmpfs(const std::string& dir) {
  struct statfs fs;
  return statfs(dir.c_str(), &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

void WriteFile(const std::string& path, size_t bytes) {
  std::string chunk(1 << 16, 'x');
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  for (size_t done = 0; done < bytes; done += chunk.size()) ASSERT_EQ(write(fd, chunk.data(), chunk.size()), 65536);
  close(fd);
}

}  // namespace

class WalArchiveFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kvrocks-walfs-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_ / "archive");
    if (OnTmpfs(dir_.string())) GTEST_SKIP() << "the temporary directory is on tmpfs";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  kvrocks::WalArchiveFileSystem fs_{rocksdb::FileSystem::Default()};
};

TEST(WalArchiveFileSystem, KnowsArchivedLogNames) {
  EXPECT_TRUE(kvrocks::WalArchiveFileSystem::IsArchivedLogName("/d/db/archive/000012.log"));
  EXPECT_TRUE(kvrocks::WalArchiveFileSystem::IsArchivedLogName("archive/7.log"));
  EXPECT_FALSE(kvrocks::WalArchiveFileSystem::IsArchivedLogName("/d/db/000012.log"));
  EXPECT_FALSE(kvrocks::WalArchiveFileSystem::IsArchivedLogName("/d/db/archive/000012.sst"));
  EXPECT_FALSE(kvrocks::WalArchiveFileSystem::IsArchivedLogName("/d/myarchive/000012.log"));
  EXPECT_FALSE(kvrocks::WalArchiveFileSystem::IsArchivedLogName("/d/archive/x/000012.log"));
}

TEST_F(WalArchiveFileSystemTest, ArchivingALogDropsItsPagesOtherRenamesDoNot) {
  const std::string log = (dir_ / "000009.log").string(), other = (dir_ / "000010.log").string();
  WriteFile(log, 4 << 20);
  WriteFile(other, 4 << 20);
  ASSERT_GT(ResidentPages(log), 0) << "a file just written is in the page cache";
  ASSERT_GT(ResidentPages(other), 0);

  const std::string archived = (dir_ / "archive" / "000009.log").string();
  ASSERT_TRUE(fs_.RenameFile(log, archived, rocksdb::IOOptions(), nullptr).ok());
  EXPECT_EQ(ResidentPages(archived), 0);
  EXPECT_EQ(std::filesystem::file_size(archived), 4u << 20);

  const std::string renamed = (dir_ / "000011.log").string();
  ASSERT_TRUE(fs_.RenameFile(other, renamed, rocksdb::IOOptions(), nullptr).ok());
  EXPECT_GT(ResidentPages(renamed), 0);
}

// The storage archives its obsolete logs (the default keeps them for kvrocks
// replicas) through this file system: they leave the page cache.
class StorageWalArchiveTest : public TempStorageTest {};

TEST_F(StorageWalArchiveTest, ArchivedLogsOfTheStorageAreNotCached) {
  if (OnTmpfs(dir_.string())) GTEST_SKIP() << "the temporary directory is on tmpfs";
  ASSERT_GT(cfg_.rocksdb_wal_ttl_seconds.get(), 0);
  std::string value(64 << 10, 'v');
  for (int i = 0; i < 64; i++) {
    ASSERT_TRUE(
        storage_->db()
            ->Put(rocksdb::WriteOptions(), storage_->cf(kvrocks::ColumnFamily::kSubkey), "k" + std::to_string(i), value)
            .ok());
  }
  ASSERT_TRUE(storage_->FlushMemTables().ok());
  const std::filesystem::path archive = dir_ / "db" / "archive";
  std::vector<std::string> logs;
  for (int tries = 0; tries < 100 && logs.empty(); tries++) {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(archive, ec)) {
      if (e.path().extension() == ".log" && e.file_size() > 0) logs.push_back(e.path().string());
    }
    if (logs.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_FALSE(logs.empty()) << "no log was archived";
  for (const auto& l : logs) EXPECT_EQ(ResidentPages(l), 0) << l;
}
