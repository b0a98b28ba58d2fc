/**
 * The unit project's synths skip Lambda bundling (CDK's `aws:cdk:bundling-stacks` context, which `new App()` also
 * reads from CDK_CONTEXT_JSON): esbuild through npm exec for every handler of every synth was half of a construct
 * suite's time, and only the asset's hash depends on it. A test that reads bundled code asks for it as the command
 * line would (`new App({ postCliContext: { 'aws:cdk:bundling-stacks': ['**'] } })`, which wins over the environment's
 * context); `make synth`, the package suites and the runtime emulator's suites bundle for real.
 */
const BUNDLING_CONTEXT = { 'aws:cdk:bundling-stacks': [] };

if (process.env.CDK_CONTEXT_JSON === undefined) process.env.CDK_CONTEXT_JSON = JSON.stringify(BUNDLING_CONTEXT);
