// Drives the Vercel AI server with the AI SDK's own chat (`ai`'s AbstractChat, what useChat
// wraps, with DefaultChatTransport): every chunk is read with the SDK's reader, which checks
// it against its uiMessageChunkSchema and fails the chat on any it rejects.
// Usage: node ai_sdk_client.cjs <node_modules dir> <url> <token> <scenario>
// Prints every chunk the chat read as a JSON line ({"request": n, "chunk": ...}), then
// {"messages": [...]} (the chat's messages), or {"error": "..."} when the chat failed.
"use strict";

const path = require("path");
const [modules, url, token, scenario] = process.argv.slice(2);
const ai = require(path.join(path.resolve(modules), "ai"));

function print(value) {
  process.stdout.write(JSON.stringify(value) + "\n");
}

// What useChat keeps in React state, kept in plain fields.
class NodeChatState {
  constructor() {
    this.status = "ready";
    this.error = undefined;
    this.messages = [];
  }
  pushMessage(message) {
    this.messages = this.messages.concat(message);
  }
  popMessage() {
    this.messages = this.messages.slice(0, -1);
  }
  replaceMessage(index, message) {
    this.messages = [
      ...this.messages.slice(0, index),
      this.snapshot(message),
      ...this.messages.slice(index + 1),
    ];
  }
  snapshot(thing) {
    return structuredClone(thing);
  }
}

class NodeChat extends ai.AbstractChat {
  constructor(init) {
    super({ ...init, state: new NodeChatState() });
  }
}

// The SDK's transport, printing each chunk its reader parsed and checked.
class RecordingTransport extends ai.DefaultChatTransport {
  constructor(options) {
    super(options);
    this.requests = 0;
  }
  processResponseStream(stream) {
    const request = ++this.requests;
    return super.processResponseStream(stream).pipeThrough(
      new TransformStream({
        transform(chunk, controller) {
          print({ request, chunk });
          controller.enqueue(chunk);
        },
      }),
    );
  }
}

async function main() {
  const errors = [];
  // Each response the chat reads ends with onFinish: a scenario waits for as many as it makes.
  let finished = 0;
  const waiting = [];
  const responses = (n) =>
    new Promise((resolve) => {
      const check = () => (finished >= n ? resolve() : waiting.push(check));
      check();
    });
  const transport = new RecordingTransport({
    api: url + "/",
    headers: { Authorization: `Bearer ${token}` },
  });
  const chat = new NodeChat({
    id: "node-chat",
    transport,
    onFinish: () => {
      finished += 1;
      waiting.splice(0).forEach((check) => check());
    },
    onError: (error) => errors.push(String(error && error.message ? error.message : error)),
    // The client runs its frontend tool, as a page would, and adds the tool's output.
    onToolCall: ({ toolCall }) => {
      if (toolCall.toolName === "pick_colour") {
        chat.addToolOutput({
          tool: "pick_colour",
          toolCallId: toolCall.toolCallId,
          output: toolCall.input.choices[1],
        });
      }
    },
    sendAutomaticallyWhen: (options) =>
      ai.lastAssistantMessageIsCompleteWithToolCalls(options) ||
      ai.lastAssistantMessageIsCompleteWithApprovalResponses(options),
  });
  try {
    if (scenario === "approval") {
      await chat.sendMessage({ text: "Weather in Oslo?" });
      const part = chat.messages.at(-1).parts.find((p) => p.state === "approval-requested");
      await chat.addToolApprovalResponse({ id: part.approval.id, approved: true });
      await responses(2); // the automatic follow-up, sent once the approval is in
    } else if (scenario === "frontend-tool") {
      await chat.sendMessage({ text: "Pick a colour for me" });
      await responses(2); // the automatic follow-up, sent once the tool's output is in
    } else {
      await chat.sendMessage({ text: "Hi" });
    }
    if (chat.status === "error" || errors.length) {
      const error = chat.error ? chat.error.message : errors.join("; ");
      print({ error: String(error) });
      return;
    }
    print({ messages: chat.messages });
  } catch (error) {
    print({ error: String(error && error.message ? error.message : error) });
  }
}

main();
