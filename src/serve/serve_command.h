// `mooncake serve stop ENDPOINT_FILE`: asks the serving job behind <run folder>/endpoint.json
// (serve.http) to stop taking requests, drain those in flight and write its run folder, and
// waits until its endpoint has closed (the run folder is written by then).
#pragma once

namespace mooncake::serve {

// argv[0] is "serve". Returns the process exit code (2 on a usage error or a bad file).
int RunServeCommand(int argc, char** argv);

}  // namespace mooncake::serve
