package io.github.kafkaemulator.testcontainers;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** A consumer group as its coordinator holds it: type, state, generation and members. */
public record GroupView(String group, String type, String state, int generation,
                        int coordinator, List<Member> members) {

    /** One member of the group. */
    public record Member(String memberId, String clientId, String groupInstanceId) {}

    static GroupView from(Object json) {
        Map<String, Object> m = Values.map(json);
        List<Member> members = new ArrayList<>();
        for (Object o : Values.list(m.get("members"))) {
            Map<String, Object> mm = Values.map(o);
            members.add(new Member(Values.str(mm.get("member_id")), Values.str(mm.get("client_id")),
                Values.str(mm.get("group_instance_id"))));
        }
        return new GroupView(Values.str(m.get("group")), Values.str(m.get("type")),
            Values.str(m.get("state")), Values.i(m.get("generation")),
            Values.i(m.get("coordinator")), List.copyOf(members));
    }
}
