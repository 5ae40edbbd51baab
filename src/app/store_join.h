// `mooncake store join CONNECT_FILE [options]`: this process becomes a store rank of the
// running store service job behind CONNECT_FILE (issue 33, item 4; docs/STORE.md "Joins and
// drains"). Run it under its own mpirun or srun for several; each process joins on its own.
#pragma once

namespace mooncake::app {

// argv[0] is "join". Returns the exit status: 0 after the job stopped it or drained it, 1 on a
// failure, 2 on a usage error, 4 when the job's master was lost.
int RunStoreJoin(int argc, char** argv);

}  // namespace mooncake::app
