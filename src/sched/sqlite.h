// A thin RAII layer over SQLite's C API: a connection, prepared statements with typed binds and columns,
// and a transaction guard (BEGIN IMMEDIATE, rolled back unless committed). Errors are IoError with the
// database path and SQLite's message.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

struct sqlite3;
struct sqlite3_stmt;

namespace ragmig::sched {

class Statement;

class Db {
 public:
  /// Opens (creating) the database at `path`; ":memory:" for one that lives in this process only.
  /// `one_thread`: the connection is used by one thread only, so SQLite need not lock it per call.
  explicit Db(const std::string& path, bool one_thread = false);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  /// Runs one or more statements without results.
  void exec(const std::string& sql);
  Statement prepare(const std::string& sql);
  /// The statement for `sql`, compiled once per connection and kept: reset and with no bindings, ready to
  /// bind and step. For the statements the scheduler runs on every transition (compiling costs more than
  /// running them). Kept by the address of `sql`, which must therefore be a string literal (or live as long
  /// as the connection). Not for a statement whose rows are still being read when it is asked for again.
  Statement& cached(const char* sql);
  int64_t last_insert_id() const;
  /// Rows changed by the last INSERT/UPDATE/DELETE.
  int changes() const;
  /// Changes whenever another connection commits (PRAGMA data_version): cheap polling for outside writes.
  int64_t data_version();
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(const std::string& what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
  std::unordered_map<const char*, std::unique_ptr<Statement>> cache_;
};

class Statement {
 public:
  Statement(Db& db, sqlite3_stmt* stmt) : db_(&db), stmt_(stmt) {}
  ~Statement();
  Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) { other.stmt_ = nullptr; }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  /// Binds are 1-based, as in SQL text.
  Statement& bind(int i, int64_t v);
  Statement& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Statement& bind(int i, double v);
  Statement& bind(int i, const std::string& v);
  Statement& bind(int i, const char* v) { return bind(i, std::string(v)); }
  Statement& bind_null(int i);
  template <typename T>
  Statement& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }

  /// Advances; true while there is a row.
  bool step();
  /// Runs a statement that returns no rows.
  void run() {
    while (step()) {
    }
  }
  void reset();

  int64_t column_int(int i) const;
  double column_double(int i) const;
  std::string column_text(int i) const;
  bool column_is_null(int i) const;

 private:
  Db* db_;
  sqlite3_stmt* stmt_;
};

/// BEGIN IMMEDIATE on construction (waiting for other writers up to the busy timeout); ROLLBACK on
/// destruction unless commit() was called. One state change = one transaction.
class Transaction {
 public:
  explicit Transaction(Db& db);
  ~Transaction();
  void commit();

 private:
  Db& db_;
  bool done_ = false;
};

}  // namespace ragmig::sched
