// Command terraform-provider-aws is the offline stand-in for hashicorp/aws (see README.md):
// it serves the real provider's schema for `terraform validate` and `terraform plan` and refuses
// to apply.
package main

import (
	"fmt"
	"os"

	"github.com/hashicorp/terraform-plugin-go/tfprotov5"
	"github.com/hashicorp/terraform-plugin-go/tfprotov5/tf5server"

	"github.com/aurora-proxy-kit/aurora-proxy-kit/test/terraform/provider/internal/provider"
	"github.com/aurora-proxy-kit/aurora-proxy-kit/test/terraform/provider/schema"
)

func main() {
	schemas, err := provider.LoadSchemas(schema.JSON)
	if err != nil {
		fmt.Fprintln(os.Stderr, "terraform-provider-aws (offline stand-in):", err)
		os.Exit(1)
	}
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Printf("offline stand-in for hashicorp/aws %s (schema from %s)\n", schemas.ProviderVersion, schemas.GeneratedFrom)
		return
	}
	err = tf5server.Serve(provider.ProviderAddress, func() tfprotov5.ProviderServer { return provider.New(schemas) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "terraform-provider-aws (offline stand-in):", err)
		os.Exit(1)
	}
}
