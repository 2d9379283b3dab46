// Two threads answer scrapes: Prometheus scrapes one at a time, and a second serves a person's curl meanwhile.
#include "monitor/metrics_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include "core/error.h"

namespace ragmig::monitor {

MetricsServer::MetricsServer(const std::string& host, int port, std::function<std::string()> render,
                             std::function<std::string()> alerts_json)
    : http_(std::make_unique<httplib::Server>()), host_(host) {
  http_->new_task_queue = [] { return new httplib::ThreadPool(2); };
  http_->Get("/metrics", [render](const httplib::Request&, httplib::Response& res) {
    res.set_content(render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  http_->Get("/alerts", [alerts_json](const httplib::Request&, httplib::Response& res) {
    res.set_content(alerts_json(), "application/json");
  });
  http_->Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ragmig scheduler: /metrics (Prometheus text format), /alerts (firing alerts, JSON)\n", "text/plain");
  });
  if (port == 0) {
    port_ = http_->bind_to_any_port(host);
    if (port_ < 0) throw IoError("--metrics-port: cannot listen on " + host + " (any port)");
  } else if (!http_->bind_to_port(host, port)) {
    throw IoError(fmt::format("--metrics-port: cannot listen on {}:{} (in use, or not an address of this machine)", host, port));
  } else {
    port_ = port;
  }
  thread_ = std::thread([this] { http_->listen_after_bind(); });
}

MetricsServer::~MetricsServer() {
  http_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string MetricsServer::url() const {
  const bool v6 = host_.find(':') != std::string::npos;
  return fmt::format("http://{}{}{}:{}/metrics", v6 ? "[" : "", host_, v6 ? "]" : "", port_);
}

}  // namespace ragmig::monitor
