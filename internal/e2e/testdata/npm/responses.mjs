// Streamed function calling through svc with the official openai npm
// package's Responses client: a streamed request offering one function
// tool, then the tool's result sent back with previous_response_id.
// Prints one JSON line the Go test (internal/e2e/npm_test.go) checks.
//
// Environment: SVC_BASE_URL (…/v1), SVC_KEY (a virtual key), SVC_MODEL.
import OpenAI from "openai";

const client = new OpenAI({ baseURL: process.env.SVC_BASE_URL, apiKey: process.env.SVC_KEY, maxRetries: 0 });
const model = process.env.SVC_MODEL;
const tools = [{
  type: "function", name: "get_weather", description: "Get the weather", strict: false,
  parameters: { type: "object", properties: { location: { type: "string" }, unit: { type: "string" } }, required: ["location", "unit"] },
}];

const events = [];
let args = "";
const stream = await client.responses.create({ model, input: "Weather in Paris?", tools, stream: true });
let final;
for await (const ev of stream) {
  events.push(ev.type);
  if (ev.type === "response.function_call_arguments.delta") args += ev.delta;
  if (ev.type === "response.completed") final = ev.response;
}
const call = final.output.find((it) => it.type === "function_call");
const next = await client.responses.create({
  model, tools, previous_response_id: final.id,
  input: [{ type: "function_call_output", call_id: call.call_id, output: JSON.stringify({ temp_c: 21 }) }],
});
const got = await client.responses.retrieve(next.id);
console.log(JSON.stringify({
  events, args, call: { name: call.name, call_id: call.call_id, arguments: call.arguments },
  first: final.id, next: { id: next.id, text: next.output_text, previous: next.previous_response_id, status: next.status },
  retrieved: got.id,
}));
