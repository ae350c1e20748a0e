#include "sensitivity/serve.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <algorithm>
#include <sstream>

#include "common/errors.hpp"

namespace bw::sensitivity {

void end_with_parent() {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() == 1) raise(SIGTERM);  // the parent ended before the request took effect
}

void serve(const std::function<json(const std::vector<std::string>& words)>& handle) {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    if (words.empty()) continue;
    if (words[0] == "quit") break;
    json out;
    try {
      out = handle(words);
    } catch (const UsageError& e) {
      out = {{"error", e.what()}};
    }
    std::cout << out.dump() << std::endl;
  }
}

namespace {
sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  return set;
}
}  // namespace

void ignore_interrupts() { signal(SIGINT, SIG_IGN); }

void prepare_signals(bool serve) {
  end_with_parent();
  if (serve)
    ignore_interrupts();  // a Ctrl-C goes to bandwall, which closes our stdin; SIGTERM ends us
  else
    block_stop_signals();
}

double seconds_option(const std::string& text) {
  const double seconds = number_word({text}, 0, "--seconds");
  if (seconds < 0) throw UsageError("--seconds " + text + " must not be negative");
  return seconds;
}

void block_stop_signals() {
  sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void wait_for_stop(double seconds) {
  sigset_t set = stop_signals();
  if (seconds > 0) {
    seconds = std::min(seconds, 1e9);  // a time_t holds it
    timespec ts{static_cast<time_t>(seconds), static_cast<long>((seconds - static_cast<long>(seconds)) * 1e9)};
    sigtimedwait(&set, nullptr, &ts);
  } else {
    int sig = 0;
    sigwait(&set, &sig);
  }
}

double number_word(const std::vector<std::string>& words, std::size_t i, const std::string& command) {
  // (finite only: the callers cast what it gives to integers and times)
  if (i >= words.size()) throw UsageError(command + ": a number is missing");
  try {
    std::size_t used = 0;
    double v = std::stod(words[i], &used);
    if (used != words[i].size() || !std::isfinite(v)) throw std::invalid_argument("not a finite number");
    return v;
  } catch (const std::logic_error&) {
    throw UsageError(command + ": '" + words[i] + "' is not a finite number");
  }
}

std::uint64_t bytes_word(const std::vector<std::string>& words, std::size_t i, const std::string& command) {
  const double v = number_word(words, i, command);
  if (v < 0 || v > 1e18) throw UsageError(command + ": '" + words[i] + "' is not a size in bytes");
  return static_cast<std::uint64_t>(v);
}

int cpu_word(const std::vector<std::string>& words, std::size_t i, const std::string& command) {
  const double v = number_word(words, i, command);
  if (v < 0 || v > 1e6 || v != static_cast<double>(static_cast<int>(v)))
    throw UsageError(command + ": '" + words[i] + "' is not a CPU number");
  return static_cast<int>(v);
}

}  // namespace bw::sensitivity
