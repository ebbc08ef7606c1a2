// The failures that end a job, one per run (run_failure.sh checks the output and that the job
// ends in time):
//   stall      process 1 does not join; process 0's collective raises DeadlineExceededError after
//              AG_DISTRIBUTE_TIMEOUT, the next one at once, and at exit the job is aborted
//              instead of hanging in MPI_Finalize.
//   dead       process 1 dies (_exit) while process 0 waits in a collective.
//   finalized  a collective after ag::distribute::finalize() is an InvalidArgumentError.
#include <ag/ag.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

// Runs `call` and prints what it raised (an error of type E), or that it raised nothing.
template <class E, class F>
void report(int rank, const char* name, F call) {
  try {
    call();
    std::printf("process %d: no error\n", rank);
  } catch (const E& e) {
    std::printf("process %d caught %s: %s\n", rank, name, e.what());
  }
  std::fflush(stdout);
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  ag::distribute::init();
  const int r = ag::distribute::rank();
  auto compiled = ag::function([](ag::Tensor x) { return ag::distribute::all_reduce(x * 2.f); });
  const ag::Tensor x = ag::ones({3}, ag::float32);
  if (mode == "stall") {
    if (r == 1) {
      sleep(8);  // then leaves without a collective
      return 0;
    }
    for (int i = 0; i < 2; ++i) report<ag::DeadlineExceededError>(r, "DeadlineExceededError", [&] { compiled(x); });
    return 0;
  }
  if (mode == "dead") {
    if (r == 1) _exit(3);
    report<ag::DeadlineExceededError>(r, "DeadlineExceededError", [&] { ag::distribute::all_reduce(x); });
    return 0;
  }
  if (mode == "finalized") {
    ag::distribute::finalize();
    report<ag::InvalidArgumentError>(r, "InvalidArgumentError", [&] { compiled(x); });
    return 0;
  }
  std::fprintf(stderr, "usage: failure_check stall|dead|finalized\n");
  return 2;
}
