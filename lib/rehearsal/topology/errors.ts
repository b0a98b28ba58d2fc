import { AssemblyInputError } from '../../cloud-assembly';

/**
 * The input (a cloud assembly or a plan) lacks what a topology needs, or is not what it claims to be.
 * Names the file, what is missing or wrong, and the fix; raised before anything starts. An AssemblyInputError,
 * as the cloud assembly reader raises for a directory that is not one.
 */
export class TopologyInputError extends AssemblyInputError {
  constructor(file: string, problem: string, fix: string, phrasing?: (file: string, problem: string) => string) {
    super(file, problem, fix, phrasing);
    this.name = 'TopologyInputError';
  }
}
