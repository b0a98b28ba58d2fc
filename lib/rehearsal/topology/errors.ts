/**
 * The input (a cloud assembly or a plan) lacks what a topology needs, or is not what it claims to be.
 * Names the file, what is missing or wrong, and the fix; raised before anything starts.
 */
export class TopologyInputError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
    readonly fix: string,
    /** How the problem relates to the file, when "<problem> in <file>" does not read right. */
    phrasing: (file: string, problem: string) => string = (f, p) => `${p} in ${f}`,
  ) {
    super(`${phrasing(file, problem)}: ${fix}`);
    this.name = 'TopologyInputError';
  }
}
