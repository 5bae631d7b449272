// SPDX-License-Identifier: GPL-2.0
// A C++ program that blocks in std::this_thread::sleep_for called from a
// member function of a namespaced class: its frames must read as perf reads
// them (app::Worker::wait_for), not mangled.  Built by Debian's g++ -O2 -g
// with frame pointers, linked against the system's libstdc++ and libc.
// sleep_for is inlined down to libc's clock_nanosleep, which keeps no frame
// pointer, so a frame walk loses the caller of that libc call (as perf
// does): wait_for sleeps through app::nap so that it is not that caller.
//   cxx_app SECONDS
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

namespace app {

__attribute__((noinline)) void nap(std::chrono::milliseconds ms)
{
	std::this_thread::sleep_for(ms);
	asm volatile("" ::: "memory");	/* no tail call: keep wait_for's frame */
}

class Worker {
public:
	// noinline: the frame must exist for the stack walk and for perf.
	__attribute__((noinline)) int wait_for(std::vector<int> &log, int ms);
};

int Worker::wait_for(std::vector<int> &log, int ms)
{
	nap(std::chrono::milliseconds(ms));
	log.push_back(ms);
	return static_cast<int>(log.size());
}

} // namespace app

int main(int argc, char **argv)
{
	double secs = argc > 1 ? std::atof(argv[1]) : 2;
	auto end = std::chrono::steady_clock::now() +
		   std::chrono::milliseconds(static_cast<long>(secs * 1000));
	app::Worker w;
	std::vector<int> log;

	while (std::chrono::steady_clock::now() < end)
		w.wait_for(log, 50);
	return log.empty();
}
