// Drives the AG-UI server with the official TypeScript client, @ag-ui/client's HttpAgent.
// Usage: node ag_ui_client.cjs <node_modules dir> <url> <token> <scenario>
// Prints every event the client received as a JSON line ({"run": n, "event": ...}),
// then {"messages": [...]} (the client's view of the thread) or {"error": "..."}.
"use strict";

const path = require("path");
const [modules, url, token, scenario] = process.argv.slice(2);
const { HttpAgent } = require(path.join(path.resolve(modules), "@ag-ui/client"));

const PICK_COLOUR = {
  name: "pick_colour",
  description: "Ask the user to pick a colour in their browser.",
  parameters: {
    type: "object",
    properties: { choices: { type: "array", items: { type: "string" } } },
    required: ["choices"],
  },
};

function print(value) {
  process.stdout.write(JSON.stringify(value) + "\n");
}

async function runOnce(agent, n, parameters) {
  await agent.runAgent(parameters, {
    onEvent: ({ event }) => print({ run: n, event }),
  });
}

async function frontendTool(agent) {
  agent.addMessage({ id: "u1", role: "user", content: "Pick a colour for me" });
  await runOnce(agent, 1, { tools: [PICK_COLOUR] });
  // The client runs the tool the model called, as a frontend would, and answers it.
  const call = agent.messages
    .flatMap((message) => message.toolCalls ?? [])
    .find((toolCall) => toolCall.function.name === "pick_colour");
  const { choices } = JSON.parse(call.function.arguments);
  agent.addMessage({ id: "r1", role: "tool", toolCallId: call.id, content: choices[1] });
  await runOnce(agent, 2, { tools: [PICK_COLOUR] });
}

async function twoQuestions(agent) {
  // The second run sends back everything the first added, its reasoning message too.
  agent.addMessage({ id: "u1", role: "user", content: "2+2?" });
  await runOnce(agent, 1, {});
  agent.addMessage({ id: "u2", role: "user", content: "And 3+3?" });
  await runOnce(agent, 2, {});
}

async function parallelCalls(agent) {
  // The model calls two server tools at once, with no text: the client makes an
  // assistant message per call as they stream, and the snapshot merges them.
  agent.addMessage({ id: "u1", role: "user", content: "Weather in Rome and Nice?" });
  await runOnce(agent, 1, {});
}

async function main() {
  const agent = new HttpAgent({
    url,
    headers: { Authorization: `Bearer ${token}` },
    threadId: "node-thread",
  });
  try {
    if (scenario === "frontend-tool") {
      await frontendTool(agent);
    } else if (scenario === "two-questions") {
      await twoQuestions(agent);
    } else if (scenario === "parallel-calls") {
      await parallelCalls(agent);
    } else {
      agent.addMessage({ id: "u1", role: "user", content: "Hi" });
      await runOnce(agent, 1, {});
    }
    print({ messages: agent.messages });
  } catch (error) {
    print({ error: String(error && error.message ? error.message : error) });
  }
}

main();
