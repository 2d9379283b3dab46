// The config table: TOML loading, --set overrides, and errors that name the source and key.
#include "core/config_table.h"

#include <gtest/gtest.h>

#include <optional>

#include "core/error.h"

namespace ragmig {
namespace {

struct Cfg {
  int64_t steps = 10;
  double lr = 0.5;
  bool flag = false;
  std::string name = "x";
};

ConfigTable table_for(Cfg& c) {
  ConfigTable t;
  t.add("train.steps", c.steps, "steps");
  t.add("train.lr", c.lr, "learning rate");
  t.add("train.flag", c.flag, "a flag");
  t.add("data.name", c.name, "a name");
  return t;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigTable, LoadsTypedValuesAndKeepsDefaults) {
  Cfg c;
  auto t = table_for(c);
  t.load_string("[train]\nsteps = 3\nlr = 2\n", "a.toml");
  EXPECT_EQ(c.steps, 3);
  EXPECT_DOUBLE_EQ(c.lr, 2.0);  // integers are accepted where numbers are expected
  EXPECT_FALSE(c.flag);
  EXPECT_EQ(c.name, "x");
}

TEST(ConfigTable, UnknownKeyNamesFileLineAndKnownKeys) {
  Cfg c;
  auto t = table_for(c);
  const std::string e = error_of([&] { t.load_string("[train]\nsteps = 3\nstep = 4\n", "a.toml"); });
  EXPECT_NE(e.find("a.toml:3"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown key 'train.step'"), std::string::npos) << e;
  EXPECT_NE(e.find("train.steps"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'train.steps'?"), std::string::npos) << e;  // one letter off
  EXPECT_EQ(error_of([&] { t.load_string("[train]\nsteeeeps = 4\n", "a.toml"); }).find("did you mean"),
            std::string::npos);  // too far off to guess
  EXPECT_NE(error_of([&] { t.apply_override("train.stpes=4"); })
                .find("--set: unknown key 'train.stpes' (did you mean 'train.steps'? see `--help` for the keys)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { t.load_string("[nope]\nx = 1\n", "b.toml"); }).find("no such section"), std::string::npos);
  // A key of another section, or outside any: that section's key is suggested.
  EXPECT_NE(error_of([&] { t.load_string("lr = 1\n", "c.toml"); }).find("c.toml:1: unknown key 'lr' (did you mean "
                                                                        "'train.lr'?)"),
            std::string::npos);
  EXPECT_NE(error_of([&] { t.load_string("[data]\nsteps = 1\n", "d.toml"); })
                .find("unknown key 'data.steps' (did you mean 'train.steps'? known in this section: data.name)"),
            std::string::npos);
}

TEST(ConfigTable, AKeyThatIsAWholeWordOfAKnownKeyIsSuggested) {
  int64_t max_steps = 1, batch_size = 2, chunk_size = 3;
  ConfigTable t;
  t.add("train.max_steps", max_steps, "steps");
  t.add("train.batch_size", batch_size, "batch");
  t.add("train.chunk_size", chunk_size, "chunk");
  EXPECT_NE(error_of([&] { t.load_string("[train]\nsteps = 3\n", "a.toml"); }).find("did you mean 'train.max_steps'?"),
            std::string::npos);
  EXPECT_NE(error_of([&] { t.apply_override("train.batch=8"); }).find("did you mean 'train.batch_size'?"),
            std::string::npos);
  EXPECT_NE(error_of([&] { t.load_string("[train]\nsize = 3\n", "a.toml"); })
                .find("did you mean 'train.batch_size' or 'train.chunk_size'?"),
            std::string::npos);
  // Part of a word is not a word: no guess.
  EXPECT_EQ(error_of([&] { t.load_string("[train]\nbat = 3\n", "a.toml"); }).find("did you mean"), std::string::npos);
}

TEST(ConfigTable, WrongTypeNamesKeyAndTypes) {
  Cfg c;
  auto t = table_for(c);
  const std::string e = error_of([&] { t.load_string("[train]\nsteps = \"ten\"\n", "a.toml"); });
  EXPECT_NE(e.find("a.toml:2"), std::string::npos) << e;
  EXPECT_NE(e.find("'train.steps' expects an integer, got a string"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { t.load_string("[train]\nsteps = 1.5\n", "a.toml"); }).find("expects an integer"),
            std::string::npos);
  EXPECT_NE(error_of([&] { t.load_string("train = [1,2\n", "a.toml"); }).find("a.toml:"), std::string::npos);
}

// Found by the structured TOML fuzz test (tests/badinput/test_toml_fuzz.cpp): a section given a value, a key given
// a table, and an array holding another type were told as unknown keys or as "expects an array, got an array".
TEST(ConfigTable, SectionsKeysAndArraysOfTheWrongShapeAreNamed) {
  Cfg c;
  std::vector<std::string> words;
  auto t = table_for(c);
  t.add("data.words", words, "words");
  EXPECT_EQ(error_of([&] { t.load_string("train = 3\n", "a.toml"); }),
            "a.toml:1: 'train' is a section: expected a table [train] of its keys, got an integer");
  EXPECT_EQ(error_of([&] { t.load_string("[train]\nlr = { a = 1 }\n", "a.toml"); }),
            "a.toml:2: key 'train.lr' expects a number, got a table");
  EXPECT_EQ(error_of([&] { t.load_string("[data]\nwords = [\"a\", 2]\n", "a.toml"); }),
            "a.toml:2: key 'data.words' expects an array of strings, got an array holding an integer");
  EXPECT_NE(error_of([&] { t.load_string("[train.lr2]\nx = 1\n", "a.toml"); }).find("unknown key 'train.lr2.x'"),
            std::string::npos);
}

// TOML has nan and inf; a NaN would pass every "must be positive" check after it. Refused where it is read.
TEST(ConfigTable, NanAndInfinityAreRefusedWithTheKey) {
  Cfg c;
  auto t = table_for(c);
  for (const char* bad : {"nan", "+inf", "-inf", "-nan"}) {
    const std::string e = error_of([&] { t.load_string(std::string("[train]\nlr = ") + bad + "\n", "a.toml"); });
    EXPECT_NE(e.find("a.toml:2"), std::string::npos) << e;
    EXPECT_NE(e.find("'train.lr' expects a finite number"), std::string::npos) << e;
  }
  EXPECT_NE(error_of([&] { t.apply_override("train.lr=inf"); }).find("expects a finite number, got inf"), std::string::npos);
  EXPECT_DOUBLE_EQ(c.lr, 0.5);
}

TEST(ConfigTable, OverridesParseAsTomlOrString) {
  Cfg c;
  auto t = table_for(c);
  t.apply_override("train.steps=7");
  t.apply_override("train.lr=1e-4");
  t.apply_override("train.flag=true");
  t.apply_override("data.name=hello world");
  t.apply_override("data.name=12");  // a string field keeps the text as written
  EXPECT_EQ(c.steps, 7);
  EXPECT_DOUBLE_EQ(c.lr, 1e-4);
  EXPECT_TRUE(c.flag);
  EXPECT_EQ(c.name, "12");
  EXPECT_NE(error_of([&] { t.apply_override("train.nope=1"); }).find("unknown key 'train.nope'"), std::string::npos);
  EXPECT_NE(error_of([&] { t.apply_override("train.steps=abc"); }).find("expects an integer"), std::string::npos);
  EXPECT_NE(error_of([&] { t.apply_override("train.steps"); }).find("expected section.key=value"), std::string::npos);
}

TEST(ConfigTable, JsonAndHelpShowEveryKey) {
  Cfg c;
  auto t = table_for(c);
  c.steps = 99;
  const auto j = t.to_json();
  EXPECT_EQ(j["train"]["steps"], 99);
  EXPECT_EQ(j["data"]["name"], "x");
  const std::string help = t.help_text();
  for (const char* key : {"train.steps", "train.lr", "train.flag", "data.name"})
    EXPECT_NE(help.find(key), std::string::npos) << key;
  EXPECT_NE(help.find("10"), std::string::npos);  // defaults are those at add() time
}

TEST(ConfigTable, StringArrays) {
  std::vector<std::string> argv = {"default"};
  ConfigTable t;
  t.add("job.argv", argv, "the command");
  t.load_string("[job]\nargv = [\"ragmig\", \"train\", \"a b\"]\n", "j.toml");
  EXPECT_EQ(argv, (std::vector<std::string>{"ragmig", "train", "a b"}));
  EXPECT_EQ(t.to_json()["job"]["argv"], nlohmann::json({"ragmig", "train", "a b"}));
  t.apply_override("job.argv=[\"x\"]");
  EXPECT_EQ(argv, std::vector<std::string>{"x"});
  EXPECT_NE(error_of([&] { t.load_string("[job]\nargv = [\"a\", 1]\n", "j.toml"); }).find("array of strings"),
            std::string::npos);
  EXPECT_NE(error_of([&] { t.load_string("[job]\nargv = \"a\"\n", "j.toml"); }).find("j.toml:2"), std::string::npos);
  EXPECT_NE(t.help_text().find("strings"), std::string::npos);
}

TEST(ConfigTable, IntegerArrays) {
  std::vector<int64_t> at = {5};
  ConfigTable t;
  t.add("eval.at_steps", at, "steps");
  t.load_string("[eval]\nat_steps = [25, 75]\n", "c.toml");
  EXPECT_EQ(at, (std::vector<int64_t>{25, 75}));
  EXPECT_EQ(t.to_json()["eval"]["at_steps"], nlohmann::json({25, 75}));
  t.apply_override("eval.at_steps=[]");
  EXPECT_TRUE(at.empty());
  EXPECT_NE(error_of([&] { t.load_string("[eval]\nat_steps = [1, 2.5]\n", "c.toml"); }).find("array of integers"),
            std::string::npos);
  EXPECT_NE(t.help_text().find("integers"), std::string::npos);
}

TEST(ConfigTable, FuzzedInputOnlyEverThrowsConfigError) {
  // Seeded mutations of a valid file plus random bytes: the parser must reject with ConfigError or accept.
  const std::string valid = "[train]\nsteps = 3\nlr = 0.25\nflag = true\n[data]\nname = \"abc\"\n";
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text = valid;
    if (iter % 3 == 0) {
      text.assign(next() % 64, '\0');
      for (auto& ch : text) ch = static_cast<char>(next() & 0xff);
    } else {
      for (uint32_t m = 0, n = 1 + next() % 4; m < n; ++m) text[next() % text.size()] = static_cast<char>(next() & 0xff);
    }
    Cfg c;
    auto t = table_for(c);
    try {
      t.load_string(text, "fuzz.toml");
      t.apply_override(text.substr(0, text.find('\n')));
    } catch (const ConfigError&) {
    }
  }
}

TEST(ConfigTable, AnOptionalStringIsUnsetUntilGivenAndEmptyIsAValue) {
  std::optional<std::string> prompt;
  ConfigTable t;
  t.add("model.query_prompt", prompt, "a prompt");
  EXPECT_TRUE(t.to_json()["model"]["query_prompt"].is_null());
  EXPECT_NE(t.help_text().find("(unset)"), std::string::npos) << t.help_text();
  t.load_string("[model]\nquery_prompt = \"query: \"\n", "a.toml");
  EXPECT_EQ(prompt, "query: ");
  t.apply_override("model.query_prompt=");
  EXPECT_EQ(prompt, "") << "--set key= gives the empty string, not unset";
  EXPECT_EQ(t.to_json()["model"]["query_prompt"], "");
  t.apply_override("model.query_prompt=12");
  EXPECT_EQ(prompt, "12") << "a string key takes the text as written";
  t.apply_override("model.query_prompt=search_query: ");
  EXPECT_EQ(prompt, "search_query: ");
  const std::string e = error_of([&] { t.load_string("[model]\nquery_prompt = 3\n", "b.toml"); });
  EXPECT_NE(e.find("b.toml:2: key 'model.query_prompt' expects a string"), std::string::npos) << e;
}

TEST(ConfigTable, AnOptionalBooleanIsUnsetUntilGiven) {
  std::optional<bool> eos;
  ConfigTable t;
  t.add("model.add_eos_token", eos, "append the eos");
  EXPECT_TRUE(t.to_json()["model"]["add_eos_token"].is_null());
  EXPECT_NE(t.help_text().find("(unset)"), std::string::npos) << t.help_text();
  t.load_string("[model]\nadd_eos_token = false\n", "a.toml");
  EXPECT_EQ(eos, false) << "false is a value, not unset";
  EXPECT_EQ(t.to_json()["model"]["add_eos_token"], false);
  t.apply_override("model.add_eos_token=true");
  EXPECT_EQ(eos, true);
  const std::string e = error_of([&] { t.load_string("[model]\nadd_eos_token = \"yes\"\n", "b.toml"); });
  EXPECT_NE(e.find("b.toml:2: key 'model.add_eos_token' expects a boolean"), std::string::npos) << e;
}

}  // namespace
}  // namespace ragmig
