# tflint with its bundled terraform ruleset only: no plugin downloads, so `tflint --init` is not needed.
config {
  call_module_type = "local"
}

plugin "terraform" {
  enabled = true
  preset  = "recommended"
}
