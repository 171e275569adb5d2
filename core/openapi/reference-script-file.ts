/** Where a deployment puts Scalar's browser bundle: beside the reference-script function's code, under this name. */
export const deployedScriptName = "scalar-standalone.js";
