// The parts of d3 the site uses, bundled into one ES module (docs/vendor/d3/d3.min.js;
// build_scripts/vendor/vendor.py). Modules import what they use from it by name.
export { extent, max, range, sum } from "d3-array";
export { axisBottom, axisLeft } from "d3-axis";
export { color } from "d3-color";
export { format } from "d3-format";
export { scaleBand, scaleLinear, scaleLog } from "d3-scale";
export { interpolateViridis } from "d3-scale-chromatic";
export { select } from "d3-selection";
export {
  line,
  symbol,
  symbolCircle,
  symbolCross,
  symbolDiamond,
  symbolSquare,
  symbolTriangle,
  symbolWye,
} from "d3-shape";
