#!/usr/bin/env python3
"""Puts what a deployment would have made into the rehearsal's AWS emulator, with AWS's own SDK (boto3).

Reads JSON on stdin:
  {"endpoint": "https://...", "ca": "<CA file>", "region": "...",
   "buckets": ["name", ...], "objects": [{"bucket", "key", "file"}],
   "secrets": [{"name", "value"}]}
Prints JSON on stdout: {"secrets": {"<name>": "<ARN>"}}. The emulator is reached by the endpoint given,
verified against the CA given, as the hosts reach it.
"""
import json
import sys

import boto3
from botocore.config import Config


def main():
    spec = json.load(sys.stdin)
    session = boto3.session.Session(aws_access_key_id="rehearsal", aws_secret_access_key="rehearsal", region_name=spec["region"])
    config = Config(retries={"max_attempts": 3}, s3={"addressing_style": "path"})
    client = lambda service: session.client(service, endpoint_url=spec["endpoint"], verify=spec["ca"], config=config)
    s3 = client("s3")
    for bucket in spec.get("buckets", []):
        # us-east-1 takes no location constraint; every other Region requires one.
        location = {} if spec["region"] == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": spec["region"]}}
        s3.create_bucket(Bucket=bucket, **location)
    for obj in spec.get("objects", []):
        with open(obj["file"], "rb") as f:
            s3.put_object(Bucket=obj["bucket"], Key=obj["key"], Body=f)
    secrets = client("secretsmanager")
    arns = {}
    for secret in spec.get("secrets", []):
        arns[secret["name"]] = secrets.create_secret(Name=secret["name"], SecretString=secret["value"])["ARN"]
    json.dump({"secrets": arns}, sys.stdout)


if __name__ == "__main__":
    main()
