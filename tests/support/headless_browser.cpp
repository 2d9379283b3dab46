// Headless Chromium driven through its command line (--dump-dom, --screenshot): no DevTools protocol client
// to write or depend on. Results travel back inside the dumped DOM, percent-encoded between two markers so
// that HTML serialisation cannot alter them.
#include "support/headless_browser.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

namespace ragmig::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kTimeoutS = 60;

// Runs before any script of the page (it is injected first in <head>), so it sees every error they raise;
// on load it measures each <svg> and appends the results to <body>. The markers are built by concatenation so
// that the script's own text in the dumped DOM never matches them.
constexpr const char* kCheckScript = R"js(<script>
(function () {
  var errors = [];
  function note(s) { errors.push(String(s)); }
  window.addEventListener('error', function (e) {
    var t = e.target;
    if (t && t !== window && t.tagName) {
      note('resource failed to load: <' + t.tagName.toLowerCase() + '> ' + (t.src || t.href || ''));
    } else {
      note((e.message || String(e.error)) + (e.lineno ? ' (line ' + e.lineno + ')' : ''));
    }
  }, true);
  window.addEventListener('unhandledrejection', function (e) { note('unhandled rejection: ' + e.reason); });
  var originalError = console.error;
  console.error = function () {
    note('console.error: ' + Array.prototype.map.call(arguments, String).join(' '));
    return originalError.apply(console, arguments);
  };
  window.addEventListener('load', function () {
    setTimeout(function () {
      var svgs = document.querySelectorAll('svg'), rendered = 0;
      for (var i = 0; i < svgs.length; ++i) {
        var box = svgs[i].getBoundingClientRect(), inner = null;
        try { inner = svgs[i].getBBox(); } catch (x) { inner = null; }
        if (box.width > 0 && box.height > 0 && inner && inner.width > 0 && inner.height > 0) ++rendered;
      }
      // Layout a reader would notice: a headline figure broken over lines, a page wider than the window, a
      // table wider than its box (a horizontal scroll bar, or past its panel).
      var wrapped = 0, figures = document.querySelectorAll('.card .v, .card .d');
      for (var j = 0; j < figures.length; ++j) {
        var range = document.createRange();
        range.selectNodeContents(figures[j]);
        var tops = {};
        Array.prototype.forEach.call(range.getClientRects(), function (r) { tops[Math.round(r.top)] = 1; });
        if (Object.keys(tops).length > 1) ++wrapped;
      }
      var wide = 0, tables = document.querySelectorAll('table');
      for (var k = 0; k < tables.length; ++k) {
        var box = tables[k].parentElement;
        if (Math.max(box.scrollWidth, tables[k].offsetWidth) > box.clientWidth + 1) ++wide;
      }
      var root = document.documentElement;
      var out = document.createElement('pre');
      out.id = 'ragmig-browser-check';
      out.textContent = 'RAGMIG_' + 'CHECK_BEGIN' +
          encodeURIComponent(JSON.stringify({svg_count: svgs.length, svg_rendered: rendered, errors: errors,
            wrapped_figures: wrapped, wide_tables: wide,
            page_overflow_px: Math.max(0, root.scrollWidth - root.clientWidth)})) +
          'RAGMIG_' + 'CHECK_END';
      (document.body || document.documentElement).appendChild(out);
    }, 0);
  });
})();
</script>
)js";

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool executable(const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); }

size_t find_ci(const std::string& hay, const std::string& needle, size_t from) {
  for (size_t i = from; i + needle.size() <= hay.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && std::tolower(static_cast<unsigned char>(hay[i + k])) == needle[k]) ++k;
    if (k == needle.size()) return i;
  }
  return std::string::npos;
}

// Index just after the opening tag `<name ...>` (not `<name-or-longer`), or npos.
size_t after_open_tag(const std::string& html, const std::string& name) {
  for (size_t at = find_ci(html, "<" + name, 0); at != std::string::npos; at = find_ci(html, "<" + name, at + 1)) {
    size_t next = at + 1 + name.size();
    if (next < html.size() && (html[next] == '>' || std::isspace(static_cast<unsigned char>(html[next])))) {
      size_t close = html.find('>', next);
      return close == std::string::npos ? std::string::npos : close + 1;
    }
  }
  return std::string::npos;
}

// The page with the check script as early as possible: in <head>, else after <html>, else after the doctype.
std::string inject_check(const std::string& html) {
  size_t at = after_open_tag(html, "head");
  if (at == std::string::npos) at = after_open_tag(html, "html");
  if (at == std::string::npos) {
    at = 0;
    if (find_ci(html, "<!doctype", 0) == 0) at = html.find('>') + 1;
  }
  return html.substr(0, at) + kCheckScript + html.substr(at);
}

std::string file_url(const fs::path& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string url = "file://";
  for (unsigned char c : fs::absolute(path).string()) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~') {
      url += static_cast<char>(c);
    } else {
      url += '%';
      url += hex[c >> 4];
      url += hex[c & 15];
    }
  }
  return url;
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

struct Run {
  int exit_code = -1;
  bool timed_out = false;
  std::string out, err;
};

// Runs argv with stdout and stderr in files (no pipes a lingering child could hold open), in its own process
// group so that a timeout kills Chromium's helpers too.
Run run_with_timeout(const std::vector<std::string>& argv, const fs::path& dir, const std::string& name) {
  fs::path out_path = dir / (name + ".out"), err_path = dir / (name + ".err");
  Run r;
  pid_t pid = ::fork();
  if (pid < 0) {
    r.err = "fork failed";
    return r;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null_in = ::open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || null_in < 0) ::_exit(126);
    ::dup2(null_in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here: whichever of parent and child runs first
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kTimeoutS);
  int status = 0;
  while (true) {
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(-pid, SIGKILL);  // helpers of ours still alive in the group (normally none)
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_all(out_path);
  r.err = read_all(err_path);
  return r;
}

std::vector<std::string> chromium_argv(const std::string& chromium, const fs::path& profile) {
  return {chromium,
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-dev-shm-usage",
          "--no-first-run",
          "--no-default-browser-check",
          "--disable-extensions",
          "--disable-background-networking",
          "--disable-sync",
          "--mute-audio",
          "--hide-scrollbars",
          "--virtual-time-budget=2000",
          "--user-data-dir=" + profile.string()};
}

void log_run(std::string& log, const std::vector<std::string>& argv, const Run& r) {
  log += "$";
  for (const auto& a : argv) log += " " + a;
  log += "\n" + r.err;
  log += r.timed_out ? "killed after " + std::to_string(kTimeoutS) + " s\n"
                     : "exit " + std::to_string(r.exit_code) + "\n";
}

}  // namespace

std::string find_chromium() {
  if (const char* env = std::getenv("RAGMIG_CHROMIUM"); env && *env) return executable(env) ? env : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::vector<std::string> folders;
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty()) folders.push_back(d);
  for (const char* name : {"chromium", "chromium-browser"})
    for (const auto& d : folders)
      if (std::string p = d + "/" + name; executable(p)) return p;
  return "";
}

BrowserCheck check_in_browser(const std::string& html_path, const std::string& screenshot) {
  BrowserCheck c;
  std::string chromium = find_chromium();
  if (chromium.empty()) {
    c.log = "chromium not found (PATH, $RAGMIG_CHROMIUM)\n";
    return c;
  }
  if (!fs::is_regular_file(html_path)) {
    c.log = "no such file: " + html_path + "\n";
    return c;
  }
  std::string pattern = (fs::temp_directory_path() / "ragmig-browser-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) {
    c.log = "mkdtemp failed\n";
    return c;
  }
  const fs::path tmp = pattern;

  // 1. The instrumented copy, its DOM dumped after load.
  fs::path copy = tmp / "page.html";
  std::ofstream(copy, std::ios::binary) << inject_check(read_all(html_path));
  auto argv = chromium_argv(chromium, tmp / "profile-dom");
  argv.push_back("--dump-dom");
  argv.push_back("--window-size=1400,2400");  // the layout measured is the screenshot's
  argv.push_back(file_url(copy));
  Run dom = run_with_timeout(argv, tmp, "dom");
  log_run(c.log, argv, dom);
  const std::string begin = "RAGMIG_CHECK_BEGIN", end = "RAGMIG_CHECK_END";
  size_t b = dom.out.find(begin);
  size_t e = b == std::string::npos ? b : dom.out.find(end, b);
  if (e != std::string::npos) {
    try {
      auto j = nlohmann::json::parse(percent_decode(dom.out.substr(b + begin.size(), e - b - begin.size())));
      c.svg_count = j.at("svg_count").get<int>();
      c.svg_rendered = j.at("svg_rendered").get<int>();
      c.console_errors = j.at("errors").get<std::vector<std::string>>();
      c.wrapped_figures = j.at("wrapped_figures").get<int>();
      c.wide_tables = j.at("wide_tables").get<int>();
      c.page_overflow_px = j.at("page_overflow_px").get<int>();
      c.ran = true;
    } catch (const std::exception& ex) {
      c.log += std::string("could not parse the check results: ") + ex.what() + "\n";
    }
  } else {
    c.log += "the check results are missing from the dumped DOM (" + std::to_string(dom.out.size()) + " bytes)\n";
  }

  // 2. The page itself, as a reader sees it.
  fs::path shot = screenshot.empty() ? fs::path(html_path).replace_extension(".png") : fs::path(screenshot);
  shot = fs::absolute(shot);
  std::error_code ec;
  fs::remove(shot, ec);  // a stale screenshot must not pass for a new one
  argv = chromium_argv(chromium, tmp / "profile-shot");
  argv.push_back("--screenshot=" + shot.string());
  argv.push_back("--window-size=1400,2400");
  argv.push_back(file_url(html_path));
  Run png = run_with_timeout(argv, tmp, "shot");
  log_run(c.log, argv, png);
  if (fs::is_regular_file(shot)) c.screenshot = shot.string();

  fs::remove_all(tmp, ec);
  return c;
}

}  // namespace ragmig::testing
