// Preloaded into a test server process (`--import`): its clock runs SVC_TEST_CLOCK_SKEW_MS ahead of the machine's,
// as a host whose clock differs from its neighbours' does.
const skew = Number(process.env.SVC_TEST_CLOCK_SKEW_MS ?? 0);
const MachineDate = Date;
globalThis.Date = class SkewedDate extends MachineDate {
  constructor(...args) {
    if (args.length === 0) super(MachineDate.now() + skew);
    else super(...args);
  }
  static now() {
    return MachineDate.now() + skew;
  }
};
