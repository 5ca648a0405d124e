#include "server/acl_commands.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kvrocks {
namespace {

AclCommandRules Rules(const std::vector<std::string>& rules) {
  AclCommandRules r;
  for (const auto& rule : rules) EXPECT_EQ(r.Apply(rule), "") << rule;
  return r;
}

int Id(const char* name) { return AclCommandTable::Instance().Find(name); }

TEST(AclCommandTable, HasRedisCommandsKvrocksDoesNotServe) {
  const AclCommandTable& t = AclCommandTable::Instance();
  ASSERT_GE(Id("sync"), 0);
  ASSERT_GE(Id("CONFIG|GET"), 0);
  EXPECT_EQ(t.entry(Id("config|get")).parent, Id("config"));
  EXPECT_EQ(Id("get|x"), -1);
  EXPECT_TRUE(t.entry(Id("get")).in_redis);
  EXPECT_FALSE(t.entry(Id("hexpire")).in_redis);
  EXPECT_TRUE(t.entry(Id("get")).categories >> AclCommandTable::CategoryIndex("string") & 1);
}

TEST(AclCommandRules, ReadBackDropsWhatACategoryCovers) {
  EXPECT_EQ(Rules({"-@all"}).Describe(), "-@all");
  EXPECT_EQ(Rules({"+@all"}).Describe(), "+@all");
  EXPECT_EQ(Rules({"+@all", "-get"}).Describe(), "+@all -get");
  EXPECT_EQ(Rules({"+@read", "-@write", "+set"}).Describe(), "-@all +@read +set");
  EXPECT_EQ(Rules({"-@all", "+config|get", "+config"}).Describe(), "-@all +config");
  EXPECT_EQ(Rules({"+@all", "-config", "+config|get"}).Describe(), "+@all -config +config|get");
  // The future-commands bit: -@all's absence keeps the rules starting from +@all.
  EXPECT_EQ(Rules({"+@all", "-@all", "+@all", "-@string"}).Describe(), "+@all -@string");
}

TEST(AclCommandRules, FirstArguments) {
  AclCommandRules r = Rules({"-@all", "+select|0", "+SELECT|0", "+debug|object"});
  EXPECT_EQ(r.Describe(), "-@all +debug|object +select|0");
  EXPECT_TRUE(r.Allows(Id("select"), false, {"select", "0"}));
  EXPECT_FALSE(r.Allows(Id("select"), false, {"select", "1"}));
  EXPECT_FALSE(r.Allows(Id("select"), false, {"select"}));
  EXPECT_TRUE(r.Allows(Id("debug"), false, {"DEBUG", "OBJECT", "k"}));
  EXPECT_TRUE(r.Allows(Id("auth"), true, {"auth", "x"}));  // no-auth commands
  EXPECT_EQ(r.Apply("+select"), "");
  EXPECT_EQ(r.Describe(), "-@all +debug|object +select");
  EXPECT_EQ(r.Apply("-select"), "");
  EXPECT_FALSE(r.Allows(Id("select"), false, {"select", "0"}));  // the first arguments went with it
}

TEST(AclCommandRules, Errors) {
  AclCommandRules r;
  EXPECT_EQ(r.Apply("+config|get|x"), "Allowing first-arg of a subcommand is not supported");
  EXPECT_EQ(r.Apply("+get|"), "Syntax error");
  EXPECT_EQ(r.Apply("-get|x"), "Unknown command or category name in ACL");
  EXPECT_EQ(r.Apply("+config|nosuch"), "Unknown command or category name in ACL");
  EXPECT_EQ(r.Apply("+@nosuch"), "Unknown command or category name in ACL");
  EXPECT_EQ(r.Apply("+nosuch"), "Unknown command or category name in ACL");
}

TEST(AclCommandRules, ClearingABitEndsAllCommands) {
  AclCommandRules r = Rules({"+@all"});
  EXPECT_TRUE(r.allows_all());
  EXPECT_EQ(r.Apply("+get"), "");
  EXPECT_TRUE(r.allows_all());
  EXPECT_EQ(r.Apply("-@string"), "");
  EXPECT_FALSE(r.allows_all());
  EXPECT_FALSE(r.Allows(Id("get"), false, {"get", "k"}));
  EXPECT_TRUE(r.Allows(Id("hget"), false, {"hget", "k", "f"}));
}

}  // namespace
}  // namespace kvrocks
