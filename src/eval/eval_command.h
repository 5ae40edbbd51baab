// `mooncake eval`: batch trace evaluation on the discrete-event simulator. Reads a trace (or
// makes a seeded synthetic one), simulates it under one config or a sweep, and writes a run
// folder: requests.csv + summary.json (single run), points/<i>/ and sweep.csv (sweep), and
// PNG plots when /usr/bin/python3 with matplotlib is present. Exit status: 0 ok, 2 bad
// option or bad input (one line naming the option, or FILE:LINE for a trace), 1 run failure.
#pragma once

#include "eval/sweep.h"

namespace mooncake::eval {

// argv[0] is "eval". Runs every sweep point in this process.
int RunEvalCommand(int argc, char** argv);

// Draws the plots of a run folder (live or eval) with tools/plot_run.py when /usr/bin/python3
// and the script are there; says so and skips them otherwise.
void PlotRunFolder(const std::string& dir);
// Same, spreading sweep points over `comm` (rank 0 writes sweep.csv and the plots).
int RunEvalCommand(int argc, char** argv, const SweepComm& comm);

}  // namespace mooncake::eval
