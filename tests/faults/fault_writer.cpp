// The writer that test_faults kills: it writes one kind of artefact through ragmig's own code, version after
// version, until it is killed (or once, with --once), printing "ready" when set up and "wrote N" after each
// version is in place. Each start continues from the version on disk, as a resumed run does.
//   fault_writer checkpoint DIR | model DIR | bm25 FILE | results FILE | store DIR  [--once] [--fsize BYTES]
// --fsize sets RLIMIT_FSIZE (SIGXFSZ ignored): every write past BYTES fails as on a full disk.
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"
#include "fault_artefacts.h"
#include "index/bm25_index.h"
#include "model/model_folder.h"
#include "sched/store.h"
#include "train/checkpoint_store.h"

namespace fs = std::filesystem;
using namespace ragmig;
using namespace ragmig::testing;

namespace {

void wrote(int64_t version) {
  std::printf("wrote %lld\n", static_cast<long long>(version));
  std::fflush(stdout);
}

void ready() {
  std::printf("ready\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fault_writer KIND PATH [--once] [--fsize BYTES]\n");
    return 64;
  }
  const std::string kind = argv[1], path = argv[2];
  bool once = false;
  for (int i = 3; i < argc; ++i) {
    if (std::strcmp(argv[i], "--once") == 0) once = true;
    if (std::strcmp(argv[i], "--fsize") == 0 && i + 1 < argc) {
      ::signal(SIGXFSZ, SIG_IGN);
      const rlim_t bytes = std::stoull(argv[++i]);
      const rlimit limit{bytes, bytes};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
  }
  try {
    if (kind == "checkpoint") {
      train::CheckpointStore store(path, 2);
      int64_t step = newest_checkpoint(path).value_or(0);
      ready();
      do {
        ++step;
        store.save(step, [&](torch::serialize::OutputArchive& a) { a.write("w", checkpoint_tensor(step)); });
        wrote(step);
      } while (!once);
    } else if (kind == "model") {
      int64_t version = model_version(path).value_or(0);
      model::DualEncoder model = fault_model();
      ready();
      do {
        set_model_version(model, ++version);
        model::save_model_folder(path, model, ragmig::text::word_piece_spec(fault_vocab()));
        wrote(version);
      } while (!once);
    } else if (kind == "bm25") {
      int64_t version = bm25_version(path).value_or(0);
      ready();
      do {
        bm25_for_version(++version).save(path);
        wrote(version);
      } while (!once);
    } else if (kind == "results") {
      int64_t version = results_version(path).value_or(0);
      ready();
      do {
        write_file_atomic(path, results_for_version(++version));
        wrote(version);
      } while (!once);
    } else if (kind == "store") {
      sched::Store store(path);
      int64_t n = static_cast<int64_t>(store.jobs(false).size());
      ready();
      do {
        sched::JobSpec spec;
        spec.name = "job-" + std::to_string(++n);
        spec.argv = {"true"};
        store.submit(spec, static_cast<double>(n));
        wrote(n);
      } while (!once);
    } else {
      std::fprintf(stderr, "unknown kind '%s'\n", kind.c_str());
      return 64;
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return 0;
}
