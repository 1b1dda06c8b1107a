// The built-in views, one line each. Another view (compare, roofline) is its own module and one more line.
import { registerView, registeredViews } from "./registry.js";
import fusion from "./fusion.js";
import fx from "./fx.js";
import timeline from "./timeline.js";
import source from "./source.js";
import kernels from "./kernels.js";
import roofline from "./roofline.js";

registerView(fusion);
registerView(fx);
registerView(timeline);
registerView(source);
registerView(kernels);
registerView(roofline);

export { registerView, registeredViews };
