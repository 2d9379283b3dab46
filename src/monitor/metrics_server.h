// The scheduler's /metrics endpoint (`ragmig run` and `ragmig batch --metrics-port`): cpp-httplib, as
// `ragmig serve`, on a thread of its own so that a scrape never waits for a scheduler pass, nor a pass for
// a scrape. Loopback by default: metrics name jobs and commands.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace ragmig::monitor {

class MetricsServer {
 public:
  /// Listens on host:port (0: any free port) and answers GET /metrics with render(), GET /alerts with
  /// alerts_json(). Throws IoError when it cannot listen.
  MetricsServer(const std::string& host, int port, std::function<std::string()> render,
                std::function<std::string()> alerts_json);
  ~MetricsServer();  ///< stops listening and joins the thread
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }
  /// "http://host:port/metrics"
  std::string url() const;

 private:
  std::unique_ptr<httplib::Server> http_;
  std::string host_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace ragmig::monitor
