// SQL for the store. Conditional UPDATEs (WHERE state = ...) make every transition safe against the CLI
// changing a job at the same moment: the loser sees zero changed rows and re-reads.
#include "sched/store.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "core/error.h"
#include "sched/sqlite.h"

namespace ragmig::sched {
namespace {

constexpr int kSchemaVersion = 1;

const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs(
  id INTEGER PRIMARY KEY,
  spec TEXT NOT NULL,
  state TEXT NOT NULL,
  submitted_at REAL NOT NULL,
  queued_since REAL NOT NULL,
  waited_s REAL NOT NULL DEFAULT 0,
  not_before REAL NOT NULL DEFAULT 0,
  service_s REAL NOT NULL DEFAULT 0,
  work_s REAL NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  reason TEXT NOT NULL DEFAULT '',
  finished_at REAL NOT NULL DEFAULT 0,
  step INTEGER NOT NULL DEFAULT -1,
  samples_per_s REAL NOT NULL DEFAULT 0,
  checkpoint_step INTEGER NOT NULL DEFAULT -1,
  events_offset INTEGER NOT NULL DEFAULT 0,
  attempt_id INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS attempts(
  id INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL REFERENCES jobs(id),
  number INTEGER NOT NULL,
  slots TEXT NOT NULL,
  started_at REAL NOT NULL,
  ended_at REAL NOT NULL DEFAULT 0,
  pid INTEGER NOT NULL DEFAULT 0,
  exit_code INTEGER NOT NULL DEFAULT -1,
  signal INTEGER NOT NULL DEFAULT 0,
  outcome TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS attempts_job ON attempts(job_id);
CREATE TABLE IF NOT EXISTS transitions(
  id INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL REFERENCES jobs(id),
  from_state TEXT NOT NULL,
  to_state TEXT NOT NULL,
  reason TEXT NOT NULL,
  at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS transitions_job ON transitions(job_id);
CREATE TABLE IF NOT EXISTS events(
  id INTEGER PRIMARY KEY,
  job_id INTEGER NOT NULL REFERENCES jobs(id),
  attempt_id INTEGER NOT NULL,
  body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS events_job ON events(job_id);
CREATE TABLE IF NOT EXISTS slots(
  id TEXT PRIMARY KEY, kind TEXT NOT NULL, profile TEXT NOT NULL, device TEXT NOT NULL,
  job_id INTEGER NOT NULL, utilization REAL NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS alerts(id INTEGER PRIMARY KEY, at REAL NOT NULL, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);
)sql";

const char* kJobColumns =
    "j.id, j.spec, j.state, j.submitted_at, j.queued_since, j.waited_s, j.not_before, j.service_s, j.work_s, "
    "j.attempts, j.failures, j.cancel_requested, j.reason, j.finished_at, j.step, j.samples_per_s, "
    "j.checkpoint_step, j.events_offset, j.attempt_id, "
    "COALESCE(a.number, 0), COALESCE(a.slots, '[]'), COALESCE(a.started_at, 0), COALESCE(a.pid, 0)";
const char* kJobFrom = " FROM jobs j LEFT JOIN attempts a ON a.id = j.attempt_id AND a.ended_at = 0";

std::vector<std::string> parse_slots(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text).get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw DataError(where + ": slots: " + e.what());
  }
}

JobRecord read_job(const Statement& st, const std::string& db_path) {
  JobRecord r;
  r.id = st.column_int(0);
  const std::string where = fmt::format("{} job {}", db_path, r.id);
  r.spec = job_spec_from_json(nlohmann::json::parse(st.column_text(1)), where);
  r.state = parse_job_state(st.column_text(2));
  r.submitted_at = st.column_double(3);
  r.queued_since = st.column_double(4);
  r.waited_s = st.column_double(5);
  r.not_before = st.column_double(6);
  r.service_s = st.column_double(7);
  r.work_s = st.column_double(8);
  r.attempts = st.column_int(9);
  r.failures = st.column_int(10);
  r.cancel_requested = st.column_int(11) != 0;
  r.reason = st.column_text(12);
  r.finished_at = st.column_double(13);
  r.step = st.column_int(14);
  r.samples_per_s = st.column_double(15);
  r.checkpoint_step = st.column_int(16);
  r.events_offset = st.column_int(17);
  r.attempt_id = st.column_int(18);
  r.attempt_number = st.column_int(19);
  r.slots = parse_slots(st.column_text(20), where);
  r.started_at = st.column_double(21);
  r.pid = st.column_int(22);
  if (r.state != JobState::Running) r.attempt_id = 0;
  return r;
}

AttemptRecord read_attempt(const Statement& st, const std::string& db_path) {
  AttemptRecord a;
  a.id = st.column_int(0);
  a.job = st.column_int(1);
  a.number = st.column_int(2);
  a.slots = parse_slots(st.column_text(3), fmt::format("{} attempt {}", db_path, a.id));
  a.started_at = st.column_double(4);
  a.ended_at = st.column_double(5);
  a.pid = st.column_int(6);
  a.exit_code = st.column_int(7);
  a.signal = st.column_int(8);
  a.outcome = st.column_text(9);
  return a;
}

const char* kAttemptColumns = "id, job_id, number, slots, started_at, ended_at, pid, exit_code, signal, outcome";

}  // namespace

std::string default_state_dir() {
  if (const char* env = std::getenv("RAGMIG_STATE")) return env;
  return ".ragmig";
}

std::string scheduler_lock_path(const std::string& state_dir) {
  return (std::filesystem::path(state_dir) / "scheduler.lock").string();
}

Store::Store(const std::string& state_dir, Mode mode)
    : dir_(state_dir), runs_dir_((std::filesystem::path(state_dir) / "runs" / "").string()) {
  std::error_code ec;
  if (mode == Mode::MustExist && !std::filesystem::exists(std::filesystem::path(dir_) / "state.db", ec))
    throw DataError(dir_ + ": no scheduler state here (nothing submitted yet, or a different --state?)");
  std::filesystem::create_directories(std::filesystem::path(dir_) / "runs", ec);
  if (ec) throw IoError(dir_ + ": cannot create the state folder: " + ec.message());
  db_ = std::make_unique<Db>((std::filesystem::path(dir_) / "state.db").string());
  use_wal();
  db_->exec("PRAGMA synchronous = NORMAL");  // WAL + NORMAL: a commit survives a process crash
  create_schema();
}

void Store::use_wal() {
  // WAL is a property of the file: the connection that creates it switches it, later ones find it set. The
  // switch needs a moment of exclusive access for which SQLite answers "database is locked" without waiting
  // on its busy handler while another process writes (a `ragmig submit` beside a running scheduler failed so):
  // so look first, and retry the switch itself for as long as the busy timeout.
  {
    auto mode = db_->prepare("PRAGMA journal_mode");  // finalized before the switch: it holds a read lock
    if (mode.step() && mode.column_text(0) == "wal") return;
  }
  for (int attempt = 0;; ++attempt) {
    try {
      db_->exec("PRAGMA journal_mode = WAL");
      return;
    } catch (const IoError&) {
      if (attempt >= 600) throw;  // 30 s
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

Store::Store(const std::string& run_root, InMemory)
    : dir_(run_root), runs_dir_((std::filesystem::path(run_root) / "runs" / "").string()), in_memory_(true) {
  db_ = std::make_unique<Db>(":memory:", /*one_thread=*/true);  // no other connection can reach it
  db_->exec("PRAGMA synchronous = OFF");  // nothing outlives the process anyway
  db_->exec("PRAGMA journal_mode = OFF");
  create_schema();
}

std::unique_ptr<Store> Store::in_memory(const std::string& run_root) {
  return std::unique_ptr<Store>(new Store(run_root, InMemory{}));
}

void Store::create_schema() {
  Transaction tx(*db_);
  db_->exec(kSchema);
  auto get = db_->prepare("SELECT value FROM meta WHERE key = 'schema_version'");
  if (get.step()) {
    const std::string version = get.column_text(0);
    if (version != std::to_string(kSchemaVersion))
      throw DataError(db_->path() + ": schema version " + version + ", this ragmig reads " +
                      std::to_string(kSchemaVersion));
  } else {
    db_->prepare("INSERT INTO meta(key, value) VALUES('schema_version', ?)").bind(1, std::to_string(kSchemaVersion)).run();
  }
  tx.commit();
  seen_version_ = db_->data_version();
}

Store::~Store() = default;

std::string Store::run_dir(JobId id) const { return runs_dir_ + std::to_string(id); }

void Store::transition(JobId id, const std::string& from, const std::string& to, const std::string& reason,
                       double now) {
  db_->cached("INSERT INTO transitions(job_id, from_state, to_state, reason, at) VALUES(?, ?, ?, ?, ?)")
      .bind(1, id).bind(2, from).bind(3, to).bind(4, reason).bind(5, now).run();
}

JobId Store::submit(const JobSpec& spec, double now) {
  validate(spec);
  Transaction tx(*db_);
  db_->cached("INSERT INTO jobs(spec, state, submitted_at, queued_since) VALUES(?, 'queued', ?, ?)")
      .bind(1, to_json(spec).dump()).bind(2, now).bind(3, now).run();
  const JobId id = db_->last_insert_id();
  transition(id, "", "queued", "submitted", now);
  tx.commit();
  return id;
}

CancelResult Store::request_cancel(JobId id, double now) {
  Transaction tx(*db_);
  auto st = db_->prepare("SELECT state FROM jobs WHERE id = ?");
  st.bind(1, id);
  if (!st.step()) throw DataError(fmt::format("no job {} in {}", id, db_->path()));
  const JobState state = parse_job_state(st.column_text(0));
  CancelResult result = CancelResult::AlreadyFinished;
  if (state == JobState::Queued) {
    db_->prepare("UPDATE jobs SET state = 'cancelled', reason = 'cancelled by user', finished_at = ? WHERE id = ?")
        .bind(1, now).bind(2, id).run();
    transition(id, "queued", "cancelled", "cancelled by user", now);
    result = CancelResult::Cancelled;
  } else if (state == JobState::Running) {
    db_->prepare("UPDATE jobs SET cancel_requested = 1 WHERE id = ?").bind(1, id).run();
    result = CancelResult::Stopping;
  }
  tx.commit();
  return result;
}

std::optional<JobRecord> Store::job(JobId id) {
  static const std::string sql = std::string("SELECT ") + kJobColumns + kJobFrom + " WHERE j.id = ?";
  auto& st = db_->cached(sql.c_str());
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  JobRecord record = read_job(st, db_->path());
  st.reset();  // a statement left on a row would pin this connection's read snapshot
  return record;
}

std::vector<JobRecord> Store::jobs(bool active_only) {
  auto st = db_->prepare(std::string("SELECT ") + kJobColumns + kJobFrom +
                         (active_only ? " WHERE j.state IN ('queued', 'running')" : "") + " ORDER BY j.id");
  std::vector<JobRecord> out;
  while (st.step()) out.push_back(read_job(st, db_->path()));
  return out;
}

std::vector<JobTimes> Store::job_times() {
  auto st = db_->prepare("SELECT id, state, submitted_at, finished_at, waited_s, service_s, attempts FROM jobs ORDER BY id");
  std::vector<JobTimes> out;
  while (st.step())
    out.push_back({st.column_int(0), parse_job_state(st.column_text(1)), st.column_double(2), st.column_double(3),
                   st.column_double(4), st.column_double(5), st.column_int(6)});
  return out;
}

std::map<JobState, int64_t> Store::count_by_state() {
  auto& st = db_->cached("SELECT state, COUNT(*) FROM jobs GROUP BY state");
  std::map<JobState, int64_t> out;
  while (st.step()) out[parse_job_state(st.column_text(0))] = st.column_int(1);
  st.reset();
  return out;
}

std::vector<AttemptRecord> Store::attempts(JobId id) {
  auto st = db_->prepare(std::string("SELECT ") + kAttemptColumns + " FROM attempts WHERE job_id = ? ORDER BY id");
  st.bind(1, id);
  std::vector<AttemptRecord> out;
  while (st.step()) out.push_back(read_attempt(st, db_->path()));
  return out;
}

std::vector<AttemptRecord> Store::open_attempts() {
  auto st = db_->prepare(std::string("SELECT ") + kAttemptColumns + " FROM attempts WHERE ended_at = 0 ORDER BY id");
  std::vector<AttemptRecord> out;
  while (st.step()) out.push_back(read_attempt(st, db_->path()));
  return out;
}

bool Store::changed_elsewhere() {
  if (in_memory_) return false;  // no other connection can reach it
  const int64_t version = db_->data_version();
  const bool changed = version != seen_version_;
  seen_version_ = version;
  return changed;
}

std::optional<int64_t> Store::start_attempt(JobId id, const std::vector<std::string>& slots, double now) {
  Transaction tx(*db_);
  auto& st = db_->cached("SELECT attempts, queued_since FROM jobs WHERE id = ? AND state = 'queued' AND cancel_requested = 0");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  const int64_t number = st.column_int(0) + 1;
  const double queued_since = st.column_double(1);
  st.reset();
  db_->cached("INSERT INTO attempts(job_id, number, slots, started_at) VALUES(?, ?, ?, ?)")
      .bind(1, id).bind(2, number).bind(3, nlohmann::json(slots).dump()).bind(4, now).run();
  const int64_t attempt = db_->last_insert_id();
  db_->cached("UPDATE jobs SET state = 'running', attempts = ?, attempt_id = ?, waited_s = waited_s + ? WHERE id = ?")
      .bind(1, number).bind(2, attempt).bind(3, std::max(0.0, now - queued_since)).bind(4, id).run();
  transition(id, "queued", "running", fmt::format("attempt {} on {}", number, fmt::join(slots, ",")), now);
  tx.commit();
  return attempt;
}

void Store::set_attempt_pid(int64_t attempt_id, int64_t pid) {
  db_->cached("UPDATE attempts SET pid = ? WHERE id = ?").bind(1, pid).bind(2, attempt_id).run();
}

bool Store::finish_attempt(JobId id, int64_t attempt_id, const AttemptEnd& end, double now) {
  Transaction tx(*db_);
  db_->cached("UPDATE attempts SET ended_at = ?, exit_code = ?, signal = ?, outcome = ? WHERE id = ? AND ended_at = 0")
      .bind(1, now).bind(2, end.exit_code).bind(3, end.signal).bind(4, end.outcome).bind(5, attempt_id).run();
  if (db_->changes() == 0) return false;  // already closed (a second report of the same exit)
  const std::string next = to_string(end.next);
  db_->cached(
         "UPDATE jobs SET state = ?, reason = ?, not_before = ?, queued_since = ?, service_s = service_s + ?, "
         "work_s = work_s + ?, failures = failures + ?, finished_at = ?, attempt_id = 0, "
         "cancel_requested = CASE WHEN ? = 'queued' THEN cancel_requested ELSE 0 END WHERE id = ?")
      .bind(1, next).bind(2, end.reason).bind(3, end.not_before).bind(4, now).bind(5, end.service_s)
      .bind(6, end.work_s).bind(7, end.failure ? 1 : 0).bind(8, is_terminal(end.next) ? now : 0.0).bind(9, next)
      .bind(10, id).run();
  transition(id, "running", next, end.reason, now);
  tx.commit();
  return true;
}

void Store::note(JobId id, const std::string& what, double now) {
  auto& st = db_->cached("SELECT state FROM jobs WHERE id = ?");
  st.bind(1, id);
  if (!st.step()) return;
  const std::string state = st.column_text(0);
  st.reset();
  transition(id, state, state, what, now);
}

void Store::record_events(JobId id, int64_t attempt_id, const std::vector<std::string>& lines, int64_t new_offset,
                          const ProgressUpdate& progress) {
  Transaction tx(*db_);
  // Cached: every pass with new events comes here, and preparing the two statements cost more than running them.
  auto& insert = db_->cached("INSERT INTO events(job_id, attempt_id, body) VALUES(?, ?, ?)");
  for (const auto& line : lines) {
    insert.bind(1, id).bind(2, attempt_id).bind(3, line).run();
    insert.reset();
  }
  db_->cached(
         "UPDATE jobs SET events_offset = ?, step = COALESCE(?, step), checkpoint_step = COALESCE(?, checkpoint_step), "
         "samples_per_s = COALESCE(?, samples_per_s) WHERE id = ?")
      .bind(1, new_offset).bind(2, progress.step).bind(3, progress.checkpoint_step).bind(4, progress.samples_per_s)
      .bind(5, id).run();
  tx.commit();
}

std::vector<std::string> Store::events(JobId id) {
  auto st = db_->prepare("SELECT body FROM events WHERE job_id = ? ORDER BY id");
  st.bind(1, id);
  std::vector<std::string> out;
  while (st.step()) out.push_back(st.column_text(0));
  return out;
}

std::vector<std::string> Store::attempt_events(JobId id, int64_t attempt_id) {
  auto st = db_->prepare("SELECT body FROM events WHERE job_id = ? AND attempt_id = ? ORDER BY id");
  st.bind(1, id).bind(2, attempt_id);
  std::vector<std::string> out;
  while (st.step()) out.push_back(st.column_text(0));
  return out;
}

std::vector<Store::StoredEvent> Store::events_after(JobId id, int64_t after_seq) {
  auto& st = db_->cached("SELECT id, body FROM events WHERE job_id = ? AND id > ? ORDER BY id");
  st.bind(1, id).bind(2, after_seq);
  std::vector<StoredEvent> out;
  while (st.step()) out.push_back({st.column_int(0), st.column_text(1)});
  st.reset();
  return out;
}

void Store::set_reason(JobId id, const std::string& reason) {
  db_->cached("UPDATE jobs SET reason = ? WHERE id = ? AND state = 'queued'").bind(1, reason).bind(2, id).run();
}

void Store::set_estimate(JobId id, double estimate_s) {
  Transaction tx(*db_);
  auto& st = db_->cached("SELECT spec FROM jobs WHERE id = ? AND state IN ('queued', 'running')");
  st.bind(1, id);
  if (!st.step()) return;
  const std::string where = fmt::format("job {}", id);
  JobSpec spec = job_spec_from_json(nlohmann::json::parse(st.column_text(0)), where);
  st.reset();
  spec.estimate_s = estimate_s;
  validate(spec);
  db_->cached("UPDATE jobs SET spec = ? WHERE id = ?").bind(1, to_json(spec).dump()).bind(2, id).run();
  tx.commit();
}

void Store::record_alert(const std::string& body, double at) {
  db_->cached("INSERT INTO alerts(at, body) VALUES(?, ?)").bind(1, at).bind(2, body).run();
}

std::vector<Store::StoredEvent> Store::alerts(int64_t after_seq) {
  auto& st = db_->cached("SELECT id, body FROM alerts WHERE id > ? ORDER BY id");
  st.bind(1, after_seq);
  std::vector<StoredEvent> out;
  while (st.step()) out.push_back({st.column_int(0), st.column_text(1)});
  st.reset();
  return out;
}

std::vector<Store::Transition> Store::transitions(JobId id) {
  auto st = db_->prepare("SELECT from_state, to_state, reason, at FROM transitions WHERE job_id = ? ORDER BY id");
  st.bind(1, id);
  std::vector<Transition> out;
  while (st.step()) out.push_back({st.column_text(0), st.column_text(1), st.column_text(2), st.column_double(3)});
  return out;
}

void Store::write_slots(const std::vector<SlotStatus>& slots) {
  Transaction tx(*db_);
  db_->exec("DELETE FROM slots");
  auto insert = db_->prepare(
      "INSERT INTO slots(id, kind, profile, device, job_id, utilization, updated_at) VALUES(?, ?, ?, ?, ?, ?, ?)");
  for (const auto& s : slots) {
    insert.bind(1, s.id).bind(2, s.kind).bind(3, s.profile).bind(4, s.device).bind(5, s.job).bind(6, s.utilization)
        .bind(7, s.updated_at).run();
    insert.reset();
  }
  tx.commit();
}

void Store::update_slots(const std::vector<SlotStatus>& slots) {
  std::optional<Transaction> tx;  // one row is one statement, atomic on its own
  if (slots.size() > 1) tx.emplace(*db_);
  for (const auto& s : slots) {
    db_->cached("UPDATE slots SET kind = ?, profile = ?, device = ?, job_id = ?, utilization = ?, updated_at = ? "
                "WHERE id = ?")
        .bind(1, s.kind).bind(2, s.profile).bind(3, s.device).bind(4, s.job).bind(5, s.utilization)
        .bind(6, s.updated_at).bind(7, s.id).run();
    if (db_->changes() == 0)
      db_->cached("INSERT INTO slots(id, kind, profile, device, job_id, utilization, updated_at) VALUES(?, ?, ?, ?, ?, ?, ?)")
          .bind(1, s.id).bind(2, s.kind).bind(3, s.profile).bind(4, s.device).bind(5, s.job).bind(6, s.utilization)
          .bind(7, s.updated_at).run();
  }
  if (tx) tx->commit();
}

std::vector<SlotStatus> Store::slots() {
  auto st = db_->prepare("SELECT id, kind, profile, device, job_id, utilization, updated_at FROM slots ORDER BY rowid");
  std::vector<SlotStatus> out;
  while (st.step())
    out.push_back({st.column_text(0), st.column_text(1), st.column_text(2), st.column_text(3), st.column_int(4),
                   st.column_double(5), st.column_double(6)});
  return out;
}

void Store::set_scheduler_info(const SchedulerInfo& info) {
  // One statement: atomic on its own.
  // Written on every pass of the loop, so formatted directly (the same JSON object as nlohmann would write),
  // and updated in place once the row exists.
  const std::string value =
      fmt::format(R"({{"heartbeat":{},"metrics_url":{},"pid":{},"policy":{},"work_rate":{}}})",
                  nlohmann::json(info.heartbeat).dump(), nlohmann::json(info.metrics_url).dump(), info.pid,
                  nlohmann::json(info.policy).dump(),
                  info.work_rate ? nlohmann::json(*info.work_rate).dump() : std::string("null"));
  db_->cached("UPDATE meta SET value = ? WHERE key = 'scheduler'").bind(1, value).run();
  if (db_->changes() == 0)
    db_->cached("INSERT INTO meta(key, value) VALUES('scheduler', ?)").bind(1, value).run();
}

std::optional<SchedulerInfo> Store::scheduler_info() {
  auto st = db_->prepare("SELECT value FROM meta WHERE key = 'scheduler'");
  if (!st.step()) return std::nullopt;
  const auto j = nlohmann::json::parse(st.column_text(0), nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  SchedulerInfo info{j.value("pid", int64_t{0}), j.value("policy", std::string()), j.value("heartbeat", 0.0),
                     j.value("metrics_url", std::string()), std::nullopt};
  if (const auto rate = j.find("work_rate"); rate != j.end() && rate->is_number()) info.work_rate = rate->get<double>();
  return info;
}

}  // namespace ragmig::sched
