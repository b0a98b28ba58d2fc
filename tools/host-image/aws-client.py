#!/usr/bin/env python3
"""The rehearsal's side of its AWS emulator, with AWS's own SDK (boto3).

  aws-client.py seed      puts what a deployment would have made into the emulator. Reads JSON on stdin:
                          {"endpoint": "https://...", "ca": "<CA file>", "region": "...",
                           "buckets": ["name", ...], "objects": [{"bucket", "key", "file"}],
                           "secrets": [{"name", "value"}]}
                          and prints {"secrets": {"<name>": "<ARN>"}}.
  aws-client.py stack     makes a stack from a template: {"endpoint", "ca", "region", "stack", "template"}; prints
                          {"stackId"}.
  aws-client.py signals   the signals a stack's resources received (SignalResource), oldest first: reads
                          {"endpoint", "ca", "region", "stack"}, prints [{"logicalResourceId", "status", "reason"}].
  aws-client.py metrics   what the hosts published to CloudWatch. Reads {"endpoint", "ca", "region",
                          "namespace"} and prints every datapoint as {"metric", "dimensions", "timestamp"
                          (seconds), "value", "unit"}, each second's Sum of one metric and dimension set.

The emulator is reached by the endpoint given, verified against the CA given, as the hosts reach it.
"""
import datetime
import json
import sys

import boto3
from botocore.config import Config


def clients(spec):
    session = boto3.session.Session(aws_access_key_id="rehearsal", aws_secret_access_key="rehearsal", region_name=spec["region"])
    config = Config(retries={"max_attempts": 3}, s3={"addressing_style": "path"})
    return lambda service: session.client(service, endpoint_url=spec["endpoint"], verify=spec["ca"], config=config)


def metrics(spec):
    cloudwatch = clients(spec)("cloudwatch")
    now = datetime.datetime.now(datetime.timezone.utc)
    points = []
    # ListMetrics may name a metric once per datapoint: each metric and dimension set is read once.
    seen = set()
    for page in cloudwatch.get_paginator("list_metrics").paginate(Namespace=spec["namespace"]):
        for m in page["Metrics"]:
            key = (m["MetricName"], tuple(sorted((d["Name"], d["Value"]) for d in m["Dimensions"])))
            if key in seen:
                continue
            seen.add(key)
            stats = cloudwatch.get_metric_statistics(
                Namespace=spec["namespace"], MetricName=m["MetricName"], Dimensions=m["Dimensions"],
                StartTime=now - datetime.timedelta(hours=1), EndTime=now + datetime.timedelta(minutes=1),
                Period=1, Statistics=["Sum"])
            for d in stats["Datapoints"]:
                points.append({"metric": m["MetricName"], "dimensions": {x["Name"]: x["Value"] for x in m["Dimensions"]},
                               "timestamp": d["Timestamp"].timestamp(), "value": d["Sum"], "unit": d.get("Unit", "")})
    json.dump(points, sys.stdout)


def seed(spec):
    client = clients(spec)
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


def stack(spec):
    cloudformation = clients(spec)("cloudformation")
    json.dump({"stackId": cloudformation.create_stack(StackName=spec["stack"], TemplateBody=spec["template"])["StackId"]}, sys.stdout)


def signals(spec):
    cloudformation = clients(spec)("cloudformation")
    events = cloudformation.describe_stack_events(StackName=spec["stack"])["StackEvents"]
    received = [e for e in reversed(events) if e.get("ResourceStatusReason", "").startswith("Received ")]
    json.dump([{"logicalResourceId": e["LogicalResourceId"], "status": e["ResourceStatusReason"].split()[1], "reason": e["ResourceStatusReason"]} for e in received], sys.stdout)


if __name__ == "__main__":
    commands = {"seed": seed, "metrics": metrics, "stack": stack, "signals": signals}
    if len(sys.argv) != 2 or sys.argv[1] not in commands:
        sys.stderr.write("usage: aws-client.py seed|metrics|stack|signals <json on stdin>\n")
        sys.exit(2)
    commands[sys.argv[1]](json.load(sys.stdin))
