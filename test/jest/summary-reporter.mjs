// Prints one plain closing line, `jest: N passed, N failed`, that CI logs can be read by
// regardless of the test runner's own summary format.
export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const suffix = skipped > 0 ? `, ${skipped} skipped` : '';
    console.log(
      `jest: ${results.numPassedTests} passed, ${results.numFailedTests} failed${suffix}`,
    );
  }
}
