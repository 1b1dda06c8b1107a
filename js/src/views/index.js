// The built-in views, one line each. Another view (compare, roofline) is its own module and one more line.

import fusion from "./fusion.js";
import fx from "./fx.js";
import kernels from "./kernels.js";
import memory from "./memory.js";
import { registeredViews, registerView } from "./registry.js";
import roofline from "./roofline.js";
import source from "./source.js";
import timeline from "./timeline.js";

registerView(fusion);
registerView(fx);
registerView(timeline);
registerView(source);
registerView(kernels);
registerView(roofline);
registerView(memory);

export { registeredViews, registerView };
