#include "serve/serve_command.h"

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "http/http_client.h"

namespace mooncake::serve {

namespace {

constexpr const char* kUsage =
    "usage: mooncake serve stop ENDPOINT_FILE\n"
    "  asks the serving job (serve.http) behind <run folder>/endpoint.json to stop: it takes no\n"
    "  new request, waits for those in flight (serve.drain), writes its run folder and ends;\n"
    "  waits up to 300 s until its endpoint has closed\n"
    "  (exit 0 stopped, 1 it did not stop in time or refused, 2 bad endpoint file)\n";

constexpr auto kWait = std::chrono::seconds(300);

int Fail(const std::string& message, int code) {
  std::cerr << "mooncake serve stop: " << message << "\n";
  return code;
}

int Stop(const std::string& file) {
  std::ifstream in(file);
  if (!in) return Fail(file + ": cannot read (the job's <run folder>/endpoint.json)", 2);
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("host") || !j["host"].is_string() ||
      !j.contains("port") || !j["port"].is_number_integer() || !j.contains("stop_token") ||
      !j["stop_token"].is_string()) {
    return Fail(file + ": not an endpoint file (host, port and stop_token expected)", 2);
  }
  const std::string host = j["host"].get<std::string>();
  const int port = j["port"].get<int>();
  const std::string where = host + ":" + std::to_string(port);
  const nlohmann::json body = {{"token", j["stop_token"]}};
  auto res = http::Post(host, port, "/admin/stop", body.dump(), "application/json",
                        std::chrono::seconds(10));
  if (!res.ok()) {
    return Fail("the job at " + where + " does not answer (" + res.status().message() +
                    "): has it stopped already?",
                1);
  }
  if (res->status != 202) {
    return Fail(
        "the job at " + where + " refused: " + std::to_string(res->status) + " " + res->body, 1);
  }
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!http::Get(host, port, "/health", std::chrono::seconds(5)).ok()) {
      std::cout << "mooncake serve stop: the job behind " << file << " has stopped\n";
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return Fail("the job at " + where + " was asked to stop but still answers after 300 s", 1);
}

}  // namespace

int RunServeCommand(int argc, char** argv) {
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::cout << kUsage;
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[1], "stop") == 0) {
    if (std::strcmp(argv[2], "--help") == 0 || std::strcmp(argv[2], "-h") == 0) {
      std::cout << kUsage;
      return 0;
    }
    return Stop(argv[2]);
  }
  std::cerr << "mooncake: "
            << (argc >= 2 ? "unknown or incomplete serve command" : "missing serve command") << "\n"
            << kUsage;
  return 2;
}

}  // namespace mooncake::serve
