// Types of the console's CSS import (esbuild bundles it into console.css); type checking only.
declare module "*.css" {}
