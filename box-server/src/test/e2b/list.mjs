// Lists the sandboxes with E2B's unchanged SDK (see sdk-suite.mjs for the environment); prints
// "listed N", or the error's class and message.
const { Sandbox } = await import(process.env.E2B_MODULE);
try {
  console.log('listed ' + (await Sandbox.list().nextItems()).length);
} catch (e) {
  console.log(e.constructor.name + ': ' + e.message);
}
