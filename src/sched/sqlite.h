// A thin RAII layer over SQLite's C API: a connection, prepared statements with typed binds and columns,
// and a transaction guard (BEGIN IMMEDIATE, rolled back unless committed). Errors are IoError with the
// database path and SQLite's message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace ragmig::sched {

class Statement;

class Db {
 public:
  /// Opens (creating) the database at `path`; ":memory:" for one that lives in this process only.
  explicit Db(const std::string& path);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  /// Runs one or more statements without results.
  void exec(const std::string& sql);
  Statement prepare(const std::string& sql);
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
