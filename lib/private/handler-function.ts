import * as fs from 'fs';
import * as path from 'path';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import { KitValidationError } from './validation';

/**
 * The kit's Lambda handlers and where their code comes from. In this repository the constructs bundle
 * lambda/src with esbuild at synth time (NodejsFunction), so an edit to a handler is deployed by the
 * next synth. The npm package carries each handler pre-bundled (bin/build-package.ts), so a CDK user
 * needs neither esbuild nor Docker: the constructs deploy that directory as it is.
 */
export const KIT_HANDLERS = ['read-handler', 'write-handler', 'role-bootstrap', 'pooler-certificate'] as const;
export type KitHandler = (typeof KIT_HANDLERS)[number];

/** The handlers' sources: lambda/src/<handler>.ts. */
export const LAMBDA_SOURCE_DIR = path.join(__dirname, '..', '..', 'lambda', 'src');

/**
 * Where the package carries the pre-bundled handlers, relative to this file once compiled:
 * <package>/dist/cdk/lib/private/ -> <package>/dist/cdk/assets/lambda/<handler>/index.js. The
 * repository has no such directory, so synth there always bundles from source.
 */
export const PREBUNDLED_HANDLERS_DIR = path.join(__dirname, '..', '..', 'assets', 'lambda');

/**
 * How every flavour bundles a handler: NodejsFunction here, bin/build-lambda.ts for the package and the
 * Terraform zips. Everything is bundled (the runtime's AWS SDK may lack @aws-sdk/rds-signer) but pg's
 * optional native binding, which the handlers do not use.
 */
export const HANDLER_BUNDLING = {
  target: 'node24',
  minify: true,
  sourceMap: true,
  externalModules: ['pg-native'],
} as const;

/** The bundle's file and export: index.js, `handler`. */
export const BUNDLED_HANDLER = 'index.handler';

export interface HandlerFunctionProps extends Omit<lambda.FunctionProps, 'code' | 'handler'> {
  /** The kit handler the function runs. */
  readonly kitHandler: KitHandler;
  /** A source file of the caller's own, bundled with NodejsFunction (esbuild in the caller's project) instead. */
  readonly entry?: string;
}

/** The directory of a pre-bundled handler, when this copy of the kit carries one. */
export function prebundledHandler(handler: KitHandler, dir = PREBUNDLED_HANDLERS_DIR): string | undefined {
  const bundle = path.join(dir, handler);
  return fs.existsSync(path.join(bundle, 'index.js')) ? bundle : undefined;
}

/** A Lambda function running a kit handler: pre-bundled where the package carries it, else bundled from lambda/src. */
export function handlerFunction(scope: Construct, id: string, props: HandlerFunctionProps): lambda.Function {
  const { kitHandler, entry, ...functionProps } = props;
  const prebundled = entry === undefined ? prebundledHandler(kitHandler) : undefined;
  if (prebundled !== undefined) {
    return new lambda.Function(scope, id, { ...functionProps, code: lambda.Code.fromAsset(prebundled), handler: BUNDLED_HANDLER });
  }
  const source = entry ?? path.join(LAMBDA_SOURCE_DIR, `${kitHandler}.ts`);
  if (!fs.existsSync(source)) {
    throw new KitValidationError(
      scope,
      [
        entry !== undefined
          ? `entry ${entry} does not exist: pass the path of a handler source file`
          : `handler ${kitHandler} is neither pre-bundled (${path.join(PREBUNDLED_HANDLERS_DIR, kitHandler)}) nor in source (${source}): reinstall the package, or run make package in its repository`,
      ],
    );
  }
  return new nodejs.NodejsFunction(scope, id, {
    ...functionProps,
    entry: source,
    handler: 'handler',
    // The kit's own sources resolve their dependencies from this repository's lock file; a caller's
    // entry from the caller's project (NodejsFunction finds its lock file).
    ...(entry === undefined ? { projectRoot: path.join(LAMBDA_SOURCE_DIR, '..', '..'), depsLockFilePath: path.join(LAMBDA_SOURCE_DIR, '..', '..', 'package-lock.json') } : {}),
    bundling: { ...HANDLER_BUNDLING, externalModules: [...HANDLER_BUNDLING.externalModules], forceDockerBundling: false },
  });
}
