// MISO's evaluation trace (see miso_trace.h). The 100 rows are job i's whole-A100 seconds from
// mps/scheduler/trace/trace_100.json and its model from mps/scheduler/simulator/job_models.json of the
// MISO artifact (github.com/boringlee24/socc22-miso; copy read: gajagajago/socc22-miso @ 747c02e), the
// inputs of its simulator's default run (mps/scheduler/simulator/run.py).
#include "sim/miso_trace.h"

namespace ragmig::sim {

std::span<const MisoTraceJob> miso_trace() {
  static constexpr MisoTraceJob kJobs[] = {
    {61, "cyclegan_train4"}, {64, "mobilenet_train512"}, {67, "deepspeech2_train4"}, {69, "mobilenet_train256"},
    {72, "embedding_train64"}, {75, "deepspeech2_train4"}, {78, "cyclegan_train1"}, {81, "transformer_train128"},
    {84, "embedding_train64"}, {86, "resnet_train128"}, {89, "cyclegan_train4"}, {92, "mobilenet_train64"},
    {95, "resnet_train256"}, {97, "embedding_train256"}, {100, "cyclegan_train3"}, {103, "gnn_train128"},
    {106, "deepspeech2_train8"}, {108, "embedding_train128"}, {111, "deepspeech2_train8"}, {114, "deepspeech2_train2"},
    {117, "deepspeech2_train4"}, {120, "embedding_train64"}, {123, "resnet_train128"}, {126, "transformer_train16"},
    {129, "gnn_train256"}, {132, "cyclegan_train1"}, {135, "gnn_train64"}, {138.22, "resnet_train256"},
    {142, "bert_train6"}, {145, "mobilenet_train512"}, {149, "resnet_train512"}, {153, "gnn_train512"},
    {157, "embedding_train256"}, {161, "embedding_train64"}, {165, "resnet_train256"}, {168, "resnet_train128"},
    {172, "transformer_train64"}, {176, "cyclegan_train3"}, {180, "transformer_train16"}, {184, "bert_train2"},
    {188, "deepspeech2_train16"}, {193, "cyclegan_train2"}, {198, "embedding_train128"}, {203, "deepspeech2_train8"},
    {208, "deepspeech2_train2"}, {214, "deepspeech2_train16"}, {220, "bert_train8"}, {226, "transformer_train128"},
    {234, "transformer_train128"}, {241, "cyclegan_train2"}, {248, "transformer_train32"}, {256, "transformer_train64"},
    {265, "transformer_train32"}, {275, "embedding_train256"}, {284, "embedding_train256"}, {295, "deepspeech2_train16"},
    {306, "deepspeech2_train4"}, {319, "bert_train6"}, {333, "bert_train8"}, {349, "cyclegan_train4"},
    {365, "cyclegan_train3"}, {382, "embedding_train64"}, {399, "deepspeech2_train8"}, {419, "cyclegan_train1"},
    {440, "resnet_train64"}, {466, "mobilenet_train128"}, {492, "resnet_train128"}, {519, "transformer_train16"},
    {548, "transformer_train16"}, {576, "bert_train8"}, {603, "transformer_train128"}, {634, "transformer_train128"},
    {665, "resnet_train128"}, {701, "embedding_train128"}, {745, "deepspeech2_train2"}, {796, "resnet_train128"},
    {848, "mobilenet_train512"}, {912, "cyclegan_train3"}, {977, "mobilenet_train128"}, {1034, "cyclegan_train1"},
    {1111, "resnet_train512"}, {1184, "embedding_train128"}, {1262, "resnet_train64"}, {1382.38, "resnet_train512"},
    {1515, "bert_train8"}, {1670, "deepspeech2_train16"}, {1830.96, "deepspeech2_train4"}, {1959, "embedding_train256"},
    {2087, "resnet_train256"}, {2175, "embedding_train128"}, {2282, "embedding_train128"}, {2401, "mobilenet_train512"},
    {2622.12, "cyclegan_train3"}, {2938, "resnet_train128"}, {3341.84, "mobilenet_train512"}, {3773.7, "cyclegan_train3"},
    {4195, "embedding_train512"}, {4787, "resnet_train256"}, {5484, "transformer_train16"}, {6082.14, "resnet_train512"},
  };
  return kJobs;
}

}  // namespace ragmig::sim
