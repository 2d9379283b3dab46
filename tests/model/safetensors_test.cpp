// Tests of the torch-free safetensors reader and writer: bit-exact round trips for every dtype, the header
// layout, and that every kind of corrupt file (including random mutations) gives DataError, never a crash.
#include "model/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "core/atomic_file.h"
#include "core/error.h"
#include "support/test_support.h"

namespace ragmig::model {
namespace {

using ragmig::testing::ScratchDir;

std::string random_bytes(std::mt19937& rng, size_t n) {
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

RawTensor random_tensor(std::mt19937& rng, DType dtype, std::vector<int64_t> shape) {
  RawTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes = random_bytes(rng, static_cast<size_t>(element_count(t.shape) * item_size(dtype)));
  if (dtype == DType::BOOL)
    for (auto& c : t.bytes) c = static_cast<char>(c & 1);
  return t;
}

SafetensorsFile sample_file() {
  std::mt19937 rng(7);
  SafetensorsFile f;
  f.tensors["a.weight"] = random_tensor(rng, DType::F32, {3, 5});
  f.tensors["b.bias"] = random_tensor(rng, DType::F64, {7});
  f.tensors["c"] = random_tensor(rng, DType::BF16, {2, 3, 1});
  f.tensors["d"] = random_tensor(rng, DType::I64, {4});
  f.tensors["e"] = random_tensor(rng, DType::BOOL, {5});
  f.metadata["format"] = "pt";
  return f;
}

// A file from hand-written header text and data, for corruptions the writer cannot produce.
std::string raw_file(const std::string& header, const std::string& data, uint64_t length_override = UINT64_MAX) {
  std::string out;
  uint64_t n = length_override == UINT64_MAX ? header.size() : length_override;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out + header + data;
}

void expect_data_error(const std::string& bytes, const std::string& must_contain, const std::string& source = "bad.safetensors") {
  try {
    parse_safetensors(bytes, source);
    ADD_FAILURE() << "no DataError; expected one mentioning " << must_contain;
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(source), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(must_contain), std::string::npos) << e.what();
  }
}

TEST(Safetensors, DTypeNamesRoundTrip) {
  for (DType d : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I16, DType::I8,
                  DType::U8, DType::BOOL})
    EXPECT_EQ(parse_dtype(to_string(d)), d);
  EXPECT_EQ(to_string(DType::BF16), "BF16");
  EXPECT_EQ(item_size(DType::BF16), 2);
  EXPECT_EQ(item_size(DType::BOOL), 1);
  EXPECT_EQ(item_size(DType::F64), 8);
  EXPECT_THROW(parse_dtype("F8_E4M3"), DataError);
  EXPECT_THROW(parse_dtype("f32"), DataError);
}

TEST(Safetensors, RoundTripEveryDTypeBitExact) {
  std::mt19937 rng(42);
  SafetensorsFile f;
  int i = 0;
  for (DType d : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64, DType::I32, DType::I16, DType::I8,
                  DType::U8, DType::BOOL}) {
    const std::string n = to_string(d);
    f.tensors[n + ".matrix"] = random_tensor(rng, d, {3, 4 + i});
    f.tensors[n + ".scalar"] = random_tensor(rng, d, {});      // 0-d: one element
    f.tensors[n + ".empty"] = random_tensor(rng, d, {0});      // no bytes
    f.tensors[n + ".empty2d"] = random_tensor(rng, d, {3, 0});
    ++i;
  }
  f.metadata = {{"format", "pt"}, {"note", "ünïcode ✓"}};
  ScratchDir dir;
  const std::string path = (dir / "all.safetensors").string();
  write_safetensors(path, f);
  SafetensorsFile back = read_safetensors(path);
  EXPECT_EQ(back.metadata, f.metadata);
  ASSERT_EQ(back.tensors.size(), f.tensors.size());
  for (const auto& [name, t] : f.tensors) {
    const auto& b = back.tensors.at(name);
    EXPECT_EQ(b.dtype, t.dtype) << name;
    EXPECT_EQ(b.shape, t.shape) << name;
    EXPECT_EQ(b.bytes, t.bytes) << name;  // bit-exact, NaN payloads included
  }
  EXPECT_EQ(back.tensors.at("F32.scalar").bytes.size(), 4u);
  EXPECT_TRUE(back.tensors.at("BF16.empty").bytes.empty());
  // Writing is deterministic: same content, same bytes.
  EXPECT_EQ(serialize_safetensors(back), read_file(path));
}

TEST(Safetensors, EmptyFileHasNoTensors) {
  SafetensorsFile f;
  auto bytes = serialize_safetensors(f);
  auto back = parse_safetensors(bytes, "empty");
  EXPECT_TRUE(back.tensors.empty());
  EXPECT_TRUE(back.metadata.empty());
}

TEST(Safetensors, HeaderIsPaddedToEightAndTensorsInNameOrder) {
  for (int extra = 0; extra < 9; ++extra) {
    SafetensorsFile f = sample_file();
    f.metadata["pad"] = std::string(extra, 'x');  // shifts the header length through every residue
    std::string bytes = serialize_safetensors(f);
    uint64_t n = 0;
    std::memcpy(&n, bytes.data(), 8);
    EXPECT_EQ(n % 8, 0u);
    EXPECT_EQ(bytes[8], '{');
    std::string header = bytes.substr(8, n);
    auto last = header.find_last_not_of(' ');
    EXPECT_EQ(header[last], '}');
    EXPECT_LT(header.size() - last - 1, 8u);
    auto j = nlohmann::json::parse(header);
    int64_t expect_begin = 0;
    for (const auto& [name, t] : f.tensors) {  // std::map: name order
      EXPECT_EQ(j[name]["data_offsets"][0].get<int64_t>(), expect_begin) << name;
      expect_begin += static_cast<int64_t>(t.bytes.size());
      EXPECT_EQ(j[name]["data_offsets"][1].get<int64_t>(), expect_begin) << name;
      EXPECT_EQ(j[name]["dtype"], to_string(t.dtype));
    }
    EXPECT_EQ(bytes.size(), 8 + n + static_cast<uint64_t>(expect_begin));
  }
}

TEST(Safetensors, ReadsUnpaddedHeaderFromOtherWriters) {
  std::string data(8, '\x01');
  auto f = parse_safetensors(raw_file(R"({"x":{"dtype":"I32","shape":[2],"data_offsets":[0,8]}})", data), "ok");
  EXPECT_EQ(f.tensors.at("x").bytes, data);
}

TEST(Safetensors, WriterRejectsInconsistentTensors) {
  SafetensorsFile f;
  f.tensors["w"] = RawTensor{DType::F32, {2, 2}, std::string(15, '\0')};
  try {
    serialize_safetensors(f, "out.safetensors");
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("\"w\""), std::string::npos) << e.what();
  }
  SafetensorsFile g;
  g.tensors["__metadata__"] = RawTensor{DType::U8, {1}, std::string(1, '\0')};
  EXPECT_THROW(serialize_safetensors(g), DataError);
  SafetensorsFile h;
  h.tensors["neg"] = RawTensor{DType::U8, {-1}, ""};
  EXPECT_THROW(serialize_safetensors(h), DataError);
}

TEST(Safetensors, TruncatedFilesAreDataErrors) {
  std::string good = serialize_safetensors(sample_file());
  for (size_t cut : {size_t{0}, size_t{3}, size_t{7}, size_t{8}, size_t{20}, good.size() / 2, good.size() - 1})
    EXPECT_THROW(parse_safetensors(good.substr(0, cut), "cut.safetensors"), DataError) << "cut at " << cut;
  expect_data_error(good.substr(0, 5), "shorter than");
  expect_data_error(good.substr(0, good.size() - 1), "past the data");
}

TEST(Safetensors, HugeHeaderLengthIsDataError) {
  expect_data_error(raw_file("{}", "", UINT64_MAX - 1), "exceeds the limit");
  expect_data_error(raw_file("{}", "", kMaxSafetensorsHeader + 1), "exceeds the limit");
  expect_data_error(raw_file("{}", "", 4096), "past the end");
}

TEST(Safetensors, OverlapsGapsAndRangesAreDataErrors) {
  const std::string data(16, '\0');
  expect_data_error(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},
                                 "b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]},
                                 "c":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})", data), "overlap");
  expect_data_error(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},
                                 "b":{"dtype":"F32","shape":[1],"data_offsets":[12,16]}})", data), "\"b\": leaves a gap");
  expect_data_error(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},
                                 "b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", std::string(8, '\0')), "overlap");
  expect_data_error(raw_file(R"({"a":{"dtype":"F32","shape":[6],"data_offsets":[0,24]}})", data), "\"a\": data_offsets end 24 is past");
  expect_data_error(raw_file(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,4]}})", data), "begin 8 > end 4");
  expect_data_error(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}})", data), "\"a\"");
  expect_data_error(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", data), "\"a\"");
  expect_data_error(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551615]}})", data), "\"a\"");
  // Only 8 of the 16 data bytes are claimed.
  expect_data_error(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", data), "data holds 16 bytes");
}

TEST(Safetensors, WrongSizeAndBadFieldsAreDataErrors) {
  const std::string data(16, '\0');
  expect_data_error(raw_file(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", data), "\"w\": byte range holds 16");
  expect_data_error(raw_file(R"({"w":{"dtype":"F16","shape":[4],"data_offsets":[0,16]}})", data), "need 8");
  expect_data_error(raw_file(R"({"w":{"dtype":"Q4","shape":[4],"data_offsets":[0,16]}})", data), "\"w\": unknown safetensors dtype");
  expect_data_error(raw_file(R"({"w":{"dtype":7,"shape":[4],"data_offsets":[0,16]}})", data), "\"w\"");
  expect_data_error(raw_file(R"({"w":{"dtype":"F32","shape":[2.0,2],"data_offsets":[0,16]}})", data), "\"w\"");
  expect_data_error(raw_file(R"({"w":{"dtype":"F32","shape":[-2,-2],"data_offsets":[0,16]}})", data), "\"w\"");
  expect_data_error(raw_file(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,16]}})", data), "overflows");
  expect_data_error(raw_file(R"({"w":{"dtype":"F32","shape":4,"data_offsets":[0,16]}})", data), "\"w\"");
  expect_data_error(raw_file(R"({"w":{"shape":[4],"data_offsets":[0,16]}})", data), "missing \"dtype\"");
  expect_data_error(raw_file(R"({"w":[1,2,3]})", data), "\"w\": entry is not an object");
  expect_data_error(raw_file(R"({"__metadata__":{"k":1}})", ""), "__metadata__");
  expect_data_error(raw_file(R"({"__metadata__":[]})", ""), "__metadata__");
}

TEST(Safetensors, BadJsonIsDataError) {
  expect_data_error(raw_file(R"({"w":{"dtype":"F32",)", ""), "not valid JSON");
  expect_data_error(raw_file(R"([1,2])", ""), "not a JSON object");
  expect_data_error(raw_file("        ", ""), "not a JSON object");
  expect_data_error(raw_file(R"({} {})", ""), "not valid JSON");
  expect_data_error(raw_file("{\"\xff\xfe\":1}", ""), "not valid JSON");
  expect_data_error(raw_file(std::string("{}\0\0\0\0\0\0", 8), ""), "not valid JSON");
}

TEST(Safetensors, ErrorsNameTheFile) {
  ScratchDir dir;
  const auto path = dir / "broken.safetensors";
  write_file_atomic(path, raw_file("{oops", ""));
  try {
    read_safetensors(path.string());
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_safetensors((dir / "missing.safetensors").string()), IoError);
}

// Random mutations of a valid file: the reader must either accept the file (a mutation in the data bytes)
// or throw DataError; anything else (a crash, std::bad_alloc, another exception) fails the test.
TEST(Safetensors, RandomMutationFuzz) {
  const std::string good = serialize_safetensors(sample_file());
  uint64_t header_len = 0;
  std::memcpy(&header_len, good.data(), 8);
  std::mt19937 rng(20240611);
  int accepted = 0, rejected = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    std::string bytes = good;
    const int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations; ++m) {
      switch (rng() % 7) {
        case 0:  // any byte
          if (!bytes.empty()) bytes[rng() % bytes.size()] = static_cast<char>(rng());
          break;
        case 1:  // a byte of the header, where structure lives
          if (bytes.size() > 8) bytes[8 + rng() % std::min<size_t>(header_len, bytes.size() - 8)] = static_cast<char>(rng());
          break;
        case 2:  // a digit of the header turned into another digit: offsets and shapes change
          for (int tries = 0; tries < 50 && bytes.size() > 8; ++tries) {
            size_t at = 8 + rng() % std::min<size_t>(header_len, bytes.size() - 8);
            if (std::isdigit(static_cast<unsigned char>(bytes[at]))) {
              bytes[at] = static_cast<char>('0' + rng() % 10);
              break;
            }
          }
          break;
        case 3:  // truncate
          bytes.resize(rng() % (bytes.size() + 1));
          break;
        case 4:  // a byte of the length prefix
          if (bytes.size() >= 8) bytes[rng() % 8] = static_cast<char>(rng());
          break;
        case 5:  // insert garbage
          bytes.insert(rng() % (bytes.size() + 1), random_bytes(rng, 1 + rng() % 16));
          break;
        case 6:  // delete a run
          if (!bytes.empty()) {
            size_t at = rng() % bytes.size();
            bytes.erase(at, 1 + rng() % 16);
          }
          break;
      }
    }
    try {
      auto f = parse_safetensors(bytes, "fuzz");
      ++accepted;
      for (const auto& [name, t] : f.tensors)
        ASSERT_EQ(static_cast<int64_t>(t.bytes.size()), element_count(t.shape) * item_size(t.dtype)) << name;
    } catch (const DataError&) {
      ++rejected;
    } catch (const std::exception& e) {
      FAIL() << "iteration " << iter << ": unexpected exception " << typeid(e).name() << ": " << e.what();
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 1000);
}

}  // namespace
}  // namespace ragmig::model
