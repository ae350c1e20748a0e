// How the bandit and the pirate run beside a program: either serving commands (one per line on
// stdin, one JSON answer per line on stdout) until stdin ends, or once until SIGTERM/SIGINT.
// Either way they end with the process that started them (PR_SET_PDEATHSIG), so none is left
// behind when bandwall is killed.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/record.hpp"

namespace bw::sensitivity {

// Asks the kernel to send SIGTERM when the parent ends.
void end_with_parent();

// The first step of both mains: end_with_parent, then ignore_interrupts when serving, else
// block_stop_signals.
void prepare_signals(bool serve);

// --seconds: a finite number of seconds, not negative; UsageError otherwise.
double seconds_option(const std::string& text);

// Reads commands (words) from stdin until EOF or "quit"; handle answers each one with a JSON
// object, printed as one line and flushed. A UsageError from handle is answered as
// {"error": "..."} and serving goes on; anything else ends serving (and the process) with it.
void serve(const std::function<json(const std::vector<std::string>& words)>& handle);

// Serving: SIGINT is ignored (the terminal's Ctrl-C reaches bandwall too, which ends the serving by
// closing stdin); SIGTERM keeps its default and ends the process (as PR_SET_PDEATHSIG sends it).
void ignore_interrupts();

// Blocks SIGTERM and SIGINT in the calling thread and every thread it starts later (call it first
// in main); wait_for_stop then takes them. Blocks until one arrives, or until seconds have passed
// when seconds > 0.
void block_stop_signals();
void wait_for_stop(double seconds);

// The finite number a command word gives, or UsageError naming the command; bytes_word and
// cpu_word refuse what is no byte count or CPU number.
double number_word(const std::vector<std::string>& words, std::size_t i, const std::string& command);
std::uint64_t bytes_word(const std::vector<std::string>& words, std::size_t i, const std::string& command);
int cpu_word(const std::vector<std::string>& words, std::size_t i, const std::string& command);

}  // namespace bw::sensitivity
