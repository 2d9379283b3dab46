// SQLite specifics in one place: WAL journal, a generous busy timeout (the CLI and the scheduler write to
// the same file), foreign keys on.
#include "sched/sqlite.h"

#include <sqlite3.h>

#include "core/error.h"

namespace ragmig::sched {

Db::Db(const std::string& path, bool one_thread) : path_(path) {
  const int threading = one_thread ? SQLITE_OPEN_NOMUTEX : SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | threading, nullptr) !=
      SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw IoError(path + ": cannot open database: " + why);
  }
  sqlite3_busy_timeout(db_, 30000);
  exec("PRAGMA foreign_keys = ON");
}

Db::~Db() {
  cache_.clear();  // finalize the kept statements before the connection closes
  sqlite3_close_v2(db_);
}

void Db::fail(const std::string& what) const {
  throw IoError(path_ + ": " + what + ": " + sqlite3_errmsg(db_));
}

void Db::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string why = err ? err : "?";
    sqlite3_free(err);
    throw IoError(path_ + ": " + why + " (in: " + sql.substr(0, 80) + ")");
  }
}

Statement Db::prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK)
    fail("cannot prepare '" + sql.substr(0, 80) + "'");
  return Statement(*this, stmt);
}

Statement& Db::cached(const char* sql) {
  auto& slot = cache_[sql];
  if (!slot) slot = std::make_unique<Statement>(prepare(sql));
  else slot->reset();
  return *slot;
}

int64_t Db::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
int Db::changes() const { return sqlite3_changes(db_); }

int64_t Db::data_version() {
  auto& st = cached("PRAGMA data_version");
  st.step();
  const int64_t version = st.column_int(0);
  st.reset();
  return version;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) db_->fail("bind");
  return *this;
}
Statement& Statement::bind(int i, double v) {
  if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) db_->fail("bind");
  return *this;
}
Statement& Statement::bind(int i, const std::string& v) {
  if (sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT) != SQLITE_OK) db_->fail("bind");
  return *this;
}
Statement& Statement::bind_null(int i) {
  if (sqlite3_bind_null(stmt_, i) != SQLITE_OK) db_->fail("bind");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_->fail("step");
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::column_int(int i) const { return sqlite3_column_int64(stmt_, i); }
double Statement::column_double(int i) const { return sqlite3_column_double(stmt_, i); }
std::string Statement::column_text(int i) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, i))) : std::string();
}
bool Statement::column_is_null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }

Transaction::Transaction(Db& db) : db_(db) { db_.cached("BEGIN IMMEDIATE").run(); }
Transaction::~Transaction() {
  if (!done_) {
    try {
      db_.exec("ROLLBACK");
    } catch (...) {  // a failed rollback leaves SQLite to roll back on close
    }
  }
}
void Transaction::commit() {
  db_.cached("COMMIT").run();
  done_ = true;
}

}  // namespace ragmig::sched
