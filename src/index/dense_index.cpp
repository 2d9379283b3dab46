// FAISS behind DenseIndex (see dense_index.h). FAISS reports problems as faiss::FaissException; here they
// become ConfigError (a spec that cannot work) or DataError (a file that cannot be read).
#include "index/dense_index.h"

#include <faiss/IVFlib.h>
#include <faiss/Index.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVF.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/IndexLSH.h>
#include <faiss/IndexPQ.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/io.h>
#include <faiss/index_factory.h>
#include <faiss/index_io.h>
#include <omp.h>

#include "core/error.h"
#include "index/binary_file.h"
#include "index/parallel.h"

namespace ragmig::index {
namespace {

using faiss_idx = faiss::Index::idx_t;  // FAISS 1.7.3 has no faiss::idx_t

constexpr std::string_view kMagic = "RGMDENS\n";
constexpr uint32_t kVersion = 1;

// OpenMP's thread count is process-wide; FAISS reads it inside each call.
void set_threads(int threads) { omp_set_num_threads(resolve_threads(threads)); }

void check_dims(const FloatMatrix& m, int64_t dim, const char* what) {
  if (m.rows > 0 && m.cols != dim)
    throw DataError(std::string(what) + " have " + std::to_string(m.cols) + " dimensions, the index " + std::to_string(dim));
}

}  // namespace

DenseIndex::DenseIndex(const DenseSpec& spec, int64_t dim) : spec_(spec), dim_(dim) {
  if (dim <= 0) throw ConfigError("index " + to_string(spec) + ": dimension must be positive");
  if (spec.pq_m > 0 && dim % spec.pq_m != 0)
    throw ConfigError("index " + to_string(spec) + ": PQ" + std::to_string(spec.pq_m) + " needs a dimension divisible by " +
                      std::to_string(spec.pq_m) + ", the vectors have " + std::to_string(dim));
  try {
    if (spec.kind == DenseKind::kLsh) {
      // FAISS's factory builds LSH for L2 only; sign codes of a random rotation approximate angles either way.
      const int bits = spec.lsh_bits > 0 ? static_cast<int>(spec.lsh_bits) : static_cast<int>(dim);
      index_ = std::make_unique<faiss::IndexLSH>(dim, bits, /*rotate_data=*/true, /*train_thresholds=*/false);
    } else {
      index_.reset(faiss::index_factory(static_cast<int>(dim), spec.factory().c_str(), faiss::METRIC_INNER_PRODUCT));
    }
  } catch (const faiss::FaissException& e) {
    throw ConfigError("index " + to_string(spec) + ": FAISS refused it: " + e.what());
  }
  if (auto* hnsw = dynamic_cast<faiss::IndexHNSW*>(index_.get()))
    hnsw->hnsw.efConstruction = static_cast<int>(spec.effective_ef_construction());
  // The factory turns on polysemous training for PQ: an annealing that took minutes on 4,000 vectors and
  // serves only Hamming-filtered search, which ragmig does not use.
  if (auto* pq = dynamic_cast<faiss::IndexPQ*>(index_.get())) pq->do_polysemous_training = false;
  if (auto* ivfpq = dynamic_cast<faiss::IndexIVFPQ*>(index_.get())) ivfpq->do_polysemous_training = false;
  apply_search_parameters();
}

DenseIndex::~DenseIndex() = default;
DenseIndex::DenseIndex(DenseIndex&&) noexcept = default;
DenseIndex& DenseIndex::operator=(DenseIndex&&) noexcept = default;

void DenseIndex::apply_search_parameters() {
  if (auto* hnsw = dynamic_cast<faiss::IndexHNSW*>(index_.get())) hnsw->hnsw.efSearch = static_cast<int>(spec_.effective_ef_search());
  if (auto* ivf = faiss::ivflib::try_extract_index_ivf(index_.get())) ivf->nprobe = static_cast<size_t>(spec_.effective_nprobe());
}

void DenseIndex::set_search_parameters(const DenseSpec& spec) {
  if (spec.factory() != spec_.factory())
    throw ConfigError("search parameters of " + to_string(spec) + " do not fit an index built as " + to_string(spec_));
  spec_.ef_search = spec.ef_search;
  spec_.nprobe = spec.nprobe;
  apply_search_parameters();
}

bool DenseIndex::is_trained() const { return index_->is_trained; }
int64_t DenseIndex::size() const { return index_->ntotal; }

void DenseIndex::train(const FloatMatrix& vectors, int threads) {
  check_dims(vectors, dim_, "training vectors");
  if (index_->is_trained) return;
  const int64_t need = std::max<int64_t>(spec_.nlist, spec_.pq_m > 0 ? 256 : 1);
  if (vectors.rows < need)
    throw ConfigError("index " + to_string(spec_) + " needs at least " + std::to_string(need) + " vectors to train, got " +
                      std::to_string(vectors.rows));
  set_threads(threads);
  try {
    index_->train(vectors.rows, vectors.data.data());
  } catch (const faiss::FaissException& e) {
    throw ConfigError("index " + to_string(spec_) + ": training failed: " + e.what());
  }
}

void DenseIndex::add(const FloatMatrix& vectors, int threads) {
  check_dims(vectors, dim_, "vectors");
  RAGMIG_CHECK(index_->is_trained, "add() before train()");
  set_threads(threads);
  index_->add(vectors.rows, vectors.data.data());
}

DenseIndex DenseIndex::build(const DenseSpec& spec, const FloatMatrix& vectors, int threads) {
  DenseIndex index(spec, vectors.cols);
  index.train(vectors, threads);
  index.add(vectors, threads);
  return index;
}

SearchResult DenseIndex::search(const FloatMatrix& queries, int64_t k, int threads) const {
  check_dims(queries, dim_, "queries");
  k = std::max<int64_t>(0, std::min(k, size()));
  SearchResult out(queries.rows, k);
  if (k == 0 || queries.rows == 0) return out;
  set_threads(threads);
  std::vector<faiss_idx> labels(out.ids.size());
  if (dynamic_cast<const faiss::IndexHNSW*>(index_.get())) {
    // An HNSW search keeps efSearch candidates; fewer than k cannot give k good results.
    faiss::SearchParametersHNSW params;
    params.efSearch = static_cast<int>(std::max(spec_.effective_ef_search(), k));
    index_->search(queries.rows, queries.data.data(), k, out.scores.data(), labels.data(), &params);
  } else {
    index_->search(queries.rows, queries.data.data(), k, out.scores.data(), labels.data());
  }
  const bool distance = spec_.kind == DenseKind::kLsh;  // Hamming distance: smaller is better
  for (size_t i = 0; i < labels.size(); ++i) {
    out.ids[i] = labels[i];
    if (labels[i] < 0) out.scores[i] = 0;
    else if (distance) out.scores[i] = -out.scores[i];
  }
  return out;
}

void DenseIndex::save(const std::string& path) const {
  faiss::VectorIOWriter writer;
  faiss::write_index(index_.get(), &writer);
  ByteWriter w;
  w.str(to_string(spec_));
  w.pod<int64_t>(dim_);
  w.pod<int64_t>(size());
  w.array(writer.data);
  write_envelope(path, kMagic, kVersion, w.bytes());
}

DenseIndex DenseIndex::load(const std::string& path) {
  const std::string payload = read_envelope(path, kMagic, "ragmig dense index", kVersion);
  ByteReader r(payload, path);
  DenseIndex index;
  try {
    index.spec_ = parse_dense_spec(r.str());
  } catch (const ConfigError& e) {
    r.fail(std::string("bad index spec: ") + e.what());
  }
  index.dim_ = r.pod<int64_t>();
  const auto rows = r.pod<int64_t>();
  faiss::VectorIOReader reader;
  reader.data = r.array<uint8_t>();
  if (!r.at_end()) r.fail("trailing bytes after the index");
  try {
    index.index_.reset(faiss::read_index(&reader));
  } catch (const faiss::FaissException& e) {
    r.fail(std::string("FAISS cannot read the index: ") + e.what());
  }
  if (index.index_->d != index.dim_ || index.index_->ntotal != rows)
    r.fail("the FAISS index does not match its header (dimension or size)");
  index.apply_search_parameters();
  return index;
}

}  // namespace ragmig::index
